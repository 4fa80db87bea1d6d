//go:build integration

package fleet_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/fleet"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// failoverSigner is a signer nobody runs: an approved request stays as the
// test left it.
const failoverSigner = "example.com/clusterdesk-replicas-failover"

// TestFailover runs three consoles in token mode behind HAProxy (round robin,
// no stickiness), sharing --session-keys and their sign-outs' namespace, and
// kills the one serving a user's open page mid-session, with an approval in
// flight on it: the user, signed in once, stays signed in on every replica
// left; the page's stream reconnects through the balancer to another replica,
// which tells the page to resync (its event ids mean nothing there); the
// approval's form, fetched from one replica, is accepted by another; and the
// approval is applied once or fails clearly, never twice, also when the user
// sends it again through the balancer.
func TestFailover(t *testing.T) {
	testcluster.Require(t)
	bin := testcluster.ConsoleBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	if admin.BearerToken == "" {
		t.Fatal("the devcluster's admin kubeconfig has no bearer token to sign in with")
	}

	// The replicas' own namespace, where sign-outs are Leases.
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "deploy-failover-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testcluster.DeleteNamespace(t, cs, ns.Name) })
	// The keys as a mounted Secret shows them: a directory, a file of lines;
	// the first seals and signs, the second (an older key) only opens.
	keys := filepath.Join(t.TempDir(), "session-keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keys, "keys"), []byte(randomKey(t)+"\n"+randomKey(t)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	f, err := fleet.Start(ctx, fleet.Options{
		Binary: bin, Kubeconfig: testcluster.Kubeconfig(t, testcluster.Admin), Replicas: 3, Dir: t.TempDir(),
		Args: []string{"--auth", "token", "--session-keys", keys, "--namespace", ns.Name},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			for _, r := range f.Replicas {
				t.Logf("%s log:\n%s", r.Name, tail(r.Log(), 30))
			}
		}
		f.Stop()
	}()

	u := signIn(ctx, t, f, admin.BearerToken)
	t.Logf("signed in once, as %s", u.name)

	// Three rounds, the kill landing at a different moment of the approval.
	for round, delay := range []time.Duration{0, 3 * time.Millisecond, 15 * time.Millisecond} {
		t.Run(fmt.Sprintf("kill after %v", delay), func(t *testing.T) {
			name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: fmt.Sprintf("r%d", round), Signer: failoverSigner})
			failoverRound(ctx, t, f, u, cs, name, delay)
		})
	}
}

// user is one browser: its cookies (the sealed session) and who it is.
type user struct {
	name   string
	client *http.Client // pages and forms: no redirects followed, 30 s
	stream *http.Client // event streams: no time limit
}

// signIn signs in once through the balancer as token mode's form does: the
// form (and its pre-session cookie) from whichever replica the balancer picks,
// the token posted to whichever it picks next.
func signIn(ctx context.Context, t *testing.T, f *fleet.Fleet, token string) *user {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	u := &user{
		client: &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		stream: &http.Client{Jar: jar},
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.URL+"/login", nil)
	resp, err := u.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	csrf, _ := doc.Find(`[data-testid="token-form"] input[name="_csrf"]`).Attr("value")
	if csrf == "" {
		t.Fatalf("GET /login (status %d): no token form", resp.StatusCode)
	}
	form := url.Values{"token": {token}, "_csrf": {csrf}}
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, f.URL+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err = u.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST /login: status %d, want 303", resp.StatusCode)
	}
	u.name = strings.TrimSpace(getPage(ctx, t, u, f.URL+"/", "").Find(`[data-testid="user"]`).First().Text())
	if u.name == "" {
		t.Fatal("the home page after sign-in names no user")
	}
	return u
}

func failoverRound(ctx context.Context, t *testing.T, f *fleet.Fleet, u *user, cs kubernetes.Interface, name string, delay time.Duration) {
	// The user's open page: the CSR list, through the balancer, and its stream.
	page := getPage(ctx, t, u, f.URL+"/csrs?state=pending", "")
	liveURL, ok := page.Find("body").Attr("data-live-url")
	if !ok {
		t.Fatal("the list page has no data-live-url")
	}
	waitCached(ctx, t, f, u, name)
	// The previous round's stream was closed as it ended; its replica counts it
	// until it sees the close (through HAProxy, which may see it only on the
	// stream's next write). Wait until it is gone, so that the one stream
	// counted below is this round's (CI failed once so: "2 replicas hold a
	// stream" for 10 s).
	noStreamHolders(ctx, t, f)
	s := openStream(ctx, t, u, f.URL+liveURL, "", "")
	defer s.close()
	s.waitFor(t, "hello", "")
	victim := streamHolder(ctx, t, f)
	t.Logf("the stream is on %s", victim.Name)

	// The approval form from another replica, sent to the one about to die:
	// the shared keys make one replica's form token good on every replica.
	var formFrom *fleet.Replica
	for _, r := range f.Replicas {
		if r != victim {
			formFrom = r
			break
		}
	}
	form := getPage(ctx, t, u, f.URL+"/csrs/"+url.PathEscape(name), formFrom.Name)
	csrf, _ := form.Find(`form[action$="/approve"] input[name=_csrf]`).Attr("value")
	uid, _ := form.Find(`form[action$="/approve"] input[name=uid]`).Attr("value")
	if csrf == "" || uid == "" {
		t.Fatalf("the CSR page from %s has no approve form", formFrom.Name)
	}
	first := make(chan int, 1)
	go func() { first <- approve(ctx, u, f.URL, name, uid, csrf, victim.Name) }()
	time.Sleep(delay)
	victim.Kill()
	firstStatus := <-first
	t.Logf("approval (form from %s) sent to %s, killed %v later: status %d", formFrom.Name, victim.Name, delay, firstStatus)
	switch {
	case firstStatus == http.StatusSeeOther:
		// done: the console answered before it died
	case firstStatus == 0 || firstStatus >= 500:
		// failed clearly: the connection broke (HAProxy answers 502/503)
	default:
		// 403 included: with shared keys another replica's form must be accepted.
		t.Fatalf("the approval sent to the dying replica got status %d", firstStatus)
	}

	// A change while the page's stream is down or moving.
	patchAnnotation(ctx, t, cs, name, "while-down")

	// The stream ends with its replica; EventSource reconnects to the same URL
	// with Last-Event-ID, and the balancer sends it elsewhere.
	s.waitEnd(t)
	s2 := openStream(ctx, t, u, f.URL+liveURL, s.lastID(), "")
	defer s2.close()
	s2.waitFor(t, "hello", "")
	s2.waitFor(t, "resync", "csrs-rows")
	now := streamHolder(ctx, t, f)
	if now == victim {
		t.Fatalf("the reconnected stream is on the killed replica %s", victim.Name)
	}
	// The resync makes the page fetch its rows afresh: they show the change.
	rows := getPage(ctx, t, u, f.URL+"/csrs?state=pending", "")
	if rows.Find(`[id="row-csrs-`+name+`"]`).Length() == 0 && !approved(ctx, t, cs, name) {
		t.Fatalf("the list fetched after the resync does not show %s", name)
	}

	// Still signed in, as the same user, on every replica left.
	for _, r := range f.Replicas {
		if !r.Running() {
			continue
		}
		who := strings.TrimSpace(getPage(ctx, t, u, f.URL+"/csrs", r.Name).Find(`[data-testid="user"]`).First().Text())
		if who != u.name {
			t.Fatalf("%s names the user %q after the kill, want %q", r.Name, who, u.name)
		}
	}

	// The user sends the approval again (the page's form, the UID as
	// reviewed), both through the balancer with no pinning: applied if the
	// first never was, else refused as already decided.
	form2 := getPage(ctx, t, u, f.URL+"/csrs/"+url.PathEscape(name), "")
	csrf2, _ := form2.Find(`input[name=_csrf]`).First().Attr("value")
	again := approve(ctx, u, f.URL, name, uid, csrf2, "")
	t.Logf("the approval sent again through the balancer: status %d", again)
	if again != http.StatusSeeOther && again != http.StatusConflict {
		t.Fatalf("the approval sent again got status %d, want 303 (applied) or 409 (already approved)", again)
	}
	if firstStatus == http.StatusSeeOther && again != http.StatusConflict {
		t.Fatalf("the first approval was answered as done, yet the second got %d, not 409", again)
	}
	csr, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%s has %d Approved conditions, want exactly 1: %+v", name, n, csr.Status.Conditions)
	}
	t.Logf("%s: %d Approved condition on the API server", name, n)

	// The killed replica comes back for the next round.
	if err := victim.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitState(ctx, victim.Name, "UP", 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

// randomKey is one session key as `head -c 32 /dev/urandom | base64` makes it.
func randomKey(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// getPage GETs a page as the user through the balancer (pinned to a replica if
// pin is set) and fails unless it is 200: a signed-out user would get the
// sign-in page or 401.
func getPage(ctx context.Context, t *testing.T, who *user, u, pin string) *goquery.Document {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if pin != "" {
		req.Header.Set(fleet.PinHeader, pin)
	}
	resp, err := who.client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: status %d: %s", u, resp.StatusCode, tail(string(b), 5))
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// approve POSTs the approval form as the page does (pinned to a replica if
// pin is set); 0 means no answer at all.
func approve(ctx context.Context, who *user, base, name, uid, csrf, pin string) int {
	form := url.Values{"uid": {uid}, "_csrf": {csrf}, "message": {"failover test"}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/csrs/"+url.PathEscape(name)+"/approve", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if pin != "" {
		req.Header.Set(fleet.PinHeader, pin)
	}
	resp, err := who.client.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// waitCached waits until every replica's cache holds the CSR (its page answers 200).
func waitCached(ctx context.Context, t *testing.T, f *fleet.Fleet, who *user, name string) {
	t.Helper()
	for _, r := range f.Replicas {
		deadline := time.Now().Add(15 * time.Second)
		for {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.URL+"/csrs/"+url.PathEscape(name), nil)
			req.Header.Set(fleet.PinHeader, r.Name)
			resp, err := who.client.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s does not show %s within 15 s", r.Name, name)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func approved(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) bool {
	csr, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved {
			return true
		}
	}
	return false
}

func patchAnnotation(ctx context.Context, t *testing.T, cs kubernetes.Interface, name, value string) {
	t.Helper()
	patch := `{"metadata":{"annotations":{"replicas.clusterdesk.io/failover":"` + value + `"}}}`
	if _, err := cs.CertificatesV1().CertificateSigningRequests().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// streamHolder returns the replica serving the test's one open stream.
func streamHolder(ctx context.Context, t *testing.T, f *fleet.Fleet) *fleet.Replica {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var holders []*fleet.Replica
		for _, r := range f.Replicas {
			if !r.Running() {
				continue
			}
			if n, err := r.Streams(ctx); err == nil && n > 0 {
				holders = append(holders, r)
			}
		}
		if len(holders) == 1 {
			return holders[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d replicas hold a stream, want 1", len(holders))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// noStreamHolders waits until no running replica counts an event stream.
func noStreamHolders(ctx context.Context, t *testing.T, f *fleet.Fleet) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var holders []string
		for _, r := range f.Replicas {
			if !r.Running() {
				continue
			}
			if n, err := r.Streams(ctx); err != nil || n > 0 {
				holders = append(holders, fmt.Sprintf("%s (%d, err %v)", r.Name, n, err))
			}
		}
		if len(holders) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the previous round's streams are still counted after 60 s: %v", holders)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stream is an event stream read as EventSource reads it.
type stream struct {
	cancel context.CancelFunc
	events chan sseclient.Event
	ended  chan error
	last   string
}

func openStream(ctx context.Context, t *testing.T, who *user, u, lastEventID, pin string) *stream {
	t.Helper()
	sctx, cancel := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(sctx, http.MethodGet, u, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	if pin != "" {
		req.Header.Set(fleet.PinHeader, pin)
	}
	resp, err := who.stream.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		t.Fatalf("GET %s: status %d", u, resp.StatusCode)
	}
	s := &stream{cancel: cancel, events: make(chan sseclient.Event, 256), ended: make(chan error, 1)}
	go func() {
		defer resp.Body.Close()
		r := sseclient.NewReader(resp.Body)
		for {
			ev, err := r.Next()
			if err != nil {
				close(s.events)
				s.ended <- err
				return
			}
			s.events <- ev
		}
	}()
	return s
}

func (s *stream) close() { s.cancel() }

// waitFor reads events until one named event (with data, if given) arrives.
func (s *stream) waitFor(t *testing.T, event, data string) sseclient.Event {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("the stream ended before a %q event", event)
			}
			if ev.ID != "" {
				s.last = ev.ID
			}
			if ev.Event == event && (data == "" || ev.Data == data) {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %q event within 15 s", event)
		}
	}
}

// lastID is the id EventSource would send back on reconnect.
func (s *stream) lastID() string { return s.last }

// waitEnd reads until the stream ends (its replica died).
func (s *stream) waitEnd(t *testing.T) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if ok && ev.ID != "" {
				s.last = ev.ID
			}
			if !ok {
				if err := <-s.ended; err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Logf("the stream ended: %v", err)
				}
				return
			}
		case <-timeout:
			t.Fatal("the stream of the killed replica did not end within 15 s")
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
