//go:build integration

package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
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

// TestFailover runs three consoles behind HAProxy (round robin, no stickiness)
// and kills the one serving a user's open page mid-session, with an approval in
// flight on it: the user stays signed in, the page's stream reconnects through
// the balancer to another replica, which tells the page to resync (its event
// ids mean nothing there), and the approval is applied once or fails clearly,
// never twice, also when the user sends it again.
func TestFailover(t *testing.T) {
	testcluster.Require(t)
	bin := buildConsole(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	f, err := fleet.Start(ctx, fleet.Options{
		Binary: bin, Kubeconfig: testcluster.Kubeconfig(t, testcluster.Admin), Replicas: 3, Dir: t.TempDir(),
		Identity: &fleet.Identity{User: "replicas-failover", Groups: []string{"system:masters"}},
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
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))

	// Three rounds, the kill landing at a different moment of the approval.
	for round, delay := range []time.Duration{0, 3 * time.Millisecond, 15 * time.Millisecond} {
		t.Run(fmt.Sprintf("kill after %v", delay), func(t *testing.T) {
			name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: fmt.Sprintf("r%d", round), Signer: failoverSigner})
			failoverRound(ctx, t, f, cs, name, delay)
		})
	}
}

func failoverRound(ctx context.Context, t *testing.T, f *fleet.Fleet, cs kubernetes.Interface, name string, delay time.Duration) {
	// The user's open page: the CSR list, through the balancer, and its stream.
	page := getPage(ctx, t, f.URL+"/csrs?state=pending", "")
	liveURL, ok := page.Find("body").Attr("data-live-url")
	if !ok {
		t.Fatal("the list page has no data-live-url")
	}
	waitCached(ctx, t, f, name)
	s := openStream(ctx, t, f.URL+liveURL, "", "")
	defer s.close()
	s.waitFor(t, "hello", "")
	victim := streamHolder(ctx, t, f)
	t.Logf("the stream is on %s", victim.Name)

	// The approval, sent to the replica about to die, from its own form (in
	// proxy mode each replica signs CSRF tokens with its own key until the
	// session keys are shared).
	form := getPage(ctx, t, f.URL+"/csrs/"+url.PathEscape(name), victim.Name)
	csrf, _ := form.Find(`form[action$="/approve"] input[name=_csrf]`).Attr("value")
	uid, _ := form.Find(`form[action$="/approve"] input[name=uid]`).Attr("value")
	if csrf == "" || uid == "" {
		t.Fatalf("the CSR page from %s has no approve form", victim.Name)
	}
	first := make(chan int, 1)
	go func() { first <- approve(ctx, f.URL, name, uid, csrf, victim.Name) }()
	time.Sleep(delay)
	victim.Kill()
	firstStatus := <-first
	t.Logf("approval sent to %s, killed %v later: status %d", victim.Name, delay, firstStatus)
	switch {
	case firstStatus == http.StatusSeeOther:
		// done: the console answered before it died
	case firstStatus == 0 || firstStatus >= 500 || firstStatus == http.StatusForbidden:
		// failed clearly: the connection broke (HAProxy answers 502/503), or the
		// request went to another replica, which does not know the form's token
	default:
		t.Fatalf("the approval sent to the dying replica got status %d", firstStatus)
	}

	// A change while the page's stream is down or moving.
	patchAnnotation(ctx, t, cs, name, "while-down")

	// The stream ends with its replica; EventSource reconnects to the same URL
	// with Last-Event-ID, and the balancer sends it elsewhere.
	s.waitEnd(t)
	s2 := openStream(ctx, t, f.URL+liveURL, s.lastID(), "")
	defer s2.close()
	s2.waitFor(t, "hello", "")
	s2.waitFor(t, "resync", "csrs-rows")
	now := streamHolder(ctx, t, f)
	if now == victim {
		t.Fatalf("the reconnected stream is on the killed replica %s", victim.Name)
	}
	// The resync makes the page fetch its rows afresh: they show the change.
	rows := getPage(ctx, t, f.URL+"/csrs?state=pending", "")
	if rows.Find(`[id="row-csrs-`+name+`"]`).Length() == 0 && !approved(ctx, t, cs, name) {
		t.Fatalf("the list fetched after the resync does not show %s", name)
	}

	// Still signed in, on every replica left.
	for range 4 {
		getPage(ctx, t, f.URL+"/csrs", "")
	}

	// The user sends the approval again (the page's form, the UID as reviewed),
	// now to a replica that lives: applied if the first never was, else refused
	// as already decided.
	form2 := getPage(ctx, t, f.URL+"/csrs/"+url.PathEscape(name), now.Name)
	csrf2, _ := form2.Find(`input[name=_csrf]`).First().Attr("value")
	again := approve(ctx, f.URL, name, uid, csrf2, now.Name)
	t.Logf("the approval sent again to %s: status %d", now.Name, again)
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

	// The killed replica comes back for the next round.
	if err := victim.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.WaitState(ctx, victim.Name, "UP", 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

// buildConsole builds bin/clusterdesk from this tree, so the test never runs a
// stale binary.
func buildConsole(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "clusterdesk")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/clusterdesk")
	cmd.Dir = "../.."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/clusterdesk: %v\n%s", err, b)
	}
	return out
}

var noRedirect = &http.Client{
	Timeout:       30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// getPage GETs a page through the balancer (pinned to a replica if pin is
// set) and fails unless it is 200: a signed-out user would get the sign-in page
// or 401.
func getPage(ctx context.Context, t *testing.T, u, pin string) *goquery.Document {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if pin != "" {
		req.Header.Set(fleet.PinHeader, pin)
	}
	resp, err := noRedirect.Do(req)
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

// approve POSTs the approval form as the page does; 0 means no answer at all.
func approve(ctx context.Context, base, name, uid, csrf, pin string) int {
	form := url.Values{"uid": {uid}, "_csrf": {csrf}, "message": {"failover test"}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/csrs/"+url.PathEscape(name)+"/approve", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set(fleet.PinHeader, pin)
	resp, err := noRedirect.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// waitCached waits until every replica's cache holds the CSR (its page answers 200).
func waitCached(ctx context.Context, t *testing.T, f *fleet.Fleet, name string) {
	t.Helper()
	for _, r := range f.Replicas {
		deadline := time.Now().Add(15 * time.Second)
		for {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.URL+"/csrs/"+url.PathEscape(name), nil)
			req.Header.Set(fleet.PinHeader, r.Name)
			resp, err := noRedirect.Do(req)
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

// stream is an event stream read as EventSource reads it.
type stream struct {
	cancel context.CancelFunc
	events chan sseclient.Event
	ended  chan error
	last   string
}

func openStream(ctx context.Context, t *testing.T, u, lastEventID, pin string) *stream {
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
	resp, err := http.DefaultClient.Do(req)
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
