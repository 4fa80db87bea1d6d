package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
)

// liveCluster is a cache holding a few CSRs, every kind synced unless told otherwise.
type liveCluster struct {
	Cluster
	mu     sync.Mutex
	csrs   map[string]*certificatesv1.CertificateSigningRequest
	states map[kube.KindID]kube.KindStatus
}

func newLiveCluster(names ...string) *liveCluster {
	c := &liveCluster{csrs: map[string]*certificatesv1.CertificateSigningRequest{}, states: map[kube.KindID]kube.KindStatus{}}
	for _, n := range names {
		c.csrs[n] = &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: n, CreationTimestamp: metav1.Now(), ResourceVersion: "7"},
			Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/live", Username: "tester"},
		}
	}
	return c
}

// The fake holds CSRs only: no CRD or webhook configuration (the home
// page's attention section reads them).
func (c *liveCluster) CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) { return nil, nil }
func (c *liveCluster) Webhooks() ([]*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return nil, nil
}
func (c *liveCluster) MutatingWebhooks() ([]*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return nil, nil
}

func (c *liveCluster) Ready() bool           { return true }
func (c *liveCluster) ServerVersion() string { return "v1.36.3" }

func (c *liveCluster) Kind(id kube.KindID) (kube.Kind, bool) {
	for _, k := range kube.AllKinds() {
		if k.ID == id {
			return k, true
		}
	}
	return kube.Kind{}, false
}

func (c *liveCluster) Status(id kube.KindID) kube.KindStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, _ := c.Kind(id)
	if st, ok := c.states[id]; ok {
		st.Kind = k
		return st
	}
	n := 0
	if id == kube.CSRs {
		n = len(c.csrs)
	}
	return kube.KindStatus{Kind: k, State: kube.StateSynced, Count: n, SyncedAt: time.Now()}
}

func (c *liveCluster) Statuses() []kube.KindStatus {
	var out []kube.KindStatus
	for _, k := range kube.AllKinds() {
		out = append(out, c.Status(k.ID))
	}
	return out
}

func (c *liveCluster) CSR(name string) (*certificatesv1.CertificateSigningRequest, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o, ok := c.csrs[name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, name)
}

func (c *liveCluster) CSRs() ([]*certificatesv1.CertificateSigningRequest, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*certificatesv1.CertificateSigningRequest, 0, len(c.csrs))
	for _, o := range c.csrs {
		out = append(out, o)
	}
	return out, nil
}

func (c *liveCluster) setState(id kube.KindID, st kube.KindStatus) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.states[id] = st
}

func doc(t *testing.T, data []byte) *goquery.Document {
	t.Helper()
	d, err := goquery.NewDocumentFromReader(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func byEvent(msgs []live.Message) map[string]live.Message {
	out := map[string]live.Message{}
	for _, m := range msgs {
		out[m.Event] = m
	}
	return out
}

func TestLiveRenderRowsOnceWithRemovals(t *testing.T) {
	cl := newLiveCluster("csr-a", "csr-b")
	lv := NewLiveUpdates(cl, nil)
	msgs := byEvent(lv.Render(kube.CSRs, []string{"csr-a", "csr-gone"}, false))

	rows, ok := msgs["csrs-rows"]
	if !ok || rows.Topic != "csrs-rows" || rows.Sticky {
		t.Fatalf("rows message %+v", rows)
	}
	d := doc(t, rows.Data)
	if a := d.Find("tr#row-csrs-csr-a"); a.Length() != 1 || !strings.Contains(a.Text(), "example.com/live") {
		t.Fatalf("changed row missing or wrong: %q", rows.Data)
	}
	if d.Find("tr#row-csrs-csr-gone[data-live-removed]").Length() != 1 {
		t.Fatalf("deleted object not marked removed: %q", rows.Data)
	}
	if d.Find("tr#row-csrs-csr-b").Length() != 0 {
		t.Fatalf("unchanged row sent: %q", rows.Data)
	}
	// The queue's own rows (live_csr_test.go), with the count line per state tab.
	if got := strings.TrimSpace(d.Find(`[data-csr-live-tabs] [data-tab="all"] [data-testid=list-count]`).Text()); !strings.Contains(got, "of 2") {
		t.Fatalf("count line %q", got)
	}

	count, ok := msgs["csrs"]
	if !ok || !count.Sticky {
		t.Fatalf("count message %+v", count)
	}
	cd := doc(t, count.Data)
	if cd.Find("#nav-count-csrs").Text() != "2" || cd.Find("#list-total-csrs").Text() != "2" {
		t.Fatalf("count fragment %q", count.Data)
	}
	// The count did not change: the next batch does not repeat it.
	if _, again := byEvent(lv.Render(kube.CSRs, []string{"csr-a"}, false))["csrs"]; again {
		t.Fatal("unchanged count published again")
	}
}

func TestLiveRenderStaleBannerAndRecovery(t *testing.T) {
	cl := newLiveCluster("csr-a")
	lv := NewLiveUpdates(cl, nil)
	lv.now = func() time.Time { return time.Date(2026, 1, 2, 14, 3, 12, 0, time.UTC) }

	cl.setState(kube.CSRs, kube.KindStatus{State: kube.StateError, Err: errors.New("connection refused"), SyncedAt: time.Now()})
	msgs := byEvent(lv.Render(kube.CSRs, nil, true))
	status, ok := msgs["status"]
	if !ok || !status.Sticky {
		t.Fatalf("no status message: %+v", msgs)
	}
	banner := doc(t, status.Data).Find("#live-status [data-testid=banner-stale]")
	if banner.Length() != 1 || !strings.Contains(banner.Text(), "14:03:12") || !strings.Contains(banner.Text(), "connection refused") {
		t.Fatalf("stale banner %q", status.Data)
	}
	if nav := doc(t, msgs["csrs"].Data).Find("#nav-count-csrs"); nav.AttrOr("hidden", "none") == "none" {
		t.Errorf("a stale count should be hidden, as the nav hides it: %q", msgs["csrs"].Data)
	}
	if b := lv.StaleBanners(); len(b) != 1 {
		t.Errorf("pages rendered now should show the banner: %+v", b)
	}

	cl.setState(kube.CSRs, kube.KindStatus{State: kube.StateSynced, Count: 1, SyncedAt: time.Now()})
	msgs = byEvent(lv.Render(kube.CSRs, nil, true))
	if s := msgs["status"]; doc(t, s.Data).Find("[data-testid=banner-stale]").Length() != 0 {
		t.Fatalf("banner still there after recovery: %q", s.Data)
	}
	if r, ok := msgs[live.ResyncEvent]; !ok || string(r.Data) != "csrs-rows" || r.Topic != "csrs-rows" {
		t.Fatalf("recovery must resync the rows: %+v", msgs)
	}
}

func TestLiveRenderLargeBatchIsAResync(t *testing.T) {
	lv := NewLiveUpdates(newLiveCluster(), nil)
	names := make([]string, maxLiveRows+1)
	for i := range names {
		names[i] = "csr-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
	}
	msgs := byEvent(lv.Render(kube.CSRs, names, false))
	if _, ok := msgs[live.ResyncEvent]; !ok {
		t.Fatalf("messages %+v", msgs)
	}
	if _, ok := msgs["csrs-rows"]; ok {
		t.Fatal("rendered the rows as well")
	}
}

// allowKinds lets the user list only the named resources.
type allowKinds map[string]bool

func (a allowKinds) Can(_ context.Context, verb, _, resource, _, _ string) (bool, error) {
	return verb == "list" && a[resource], nil
}

type streamServer struct {
	*httptest.Server
	console *testServer // its handler and one-time login token
	streams *live.Streams
	lv      *LiveUpdates
}

func newStreamServer(t *testing.T, access Access) *streamServer {
	t.Helper()
	cl := newLiveCluster("csr-a")
	ls := &streamServer{streams: live.NewStreams(live.Options{Log: discardLog()})}
	lv := NewLiveUpdates(cl, ls.streams)
	ls.lv = lv
	ls.streams.Publish(lv.Render(kube.CSRs, nil, true)...)
	ls.console = newConsole(t, Deps{Cluster: cl, Access: access, User: "tester", Live: lv})
	ls.Server = httptest.NewServer(ls.console.e)
	t.Cleanup(func() { ls.streams.Close(); ls.Close() })
	return ls
}

func (ls *streamServer) session(t *testing.T) *http.Cookie {
	t.Helper()
	return loginOver(t, ls.URL, ls.console.token)
}

func (ls *streamServer) get(t *testing.T, path string, header http.Header, cookie *http.Cookie) *http.Response {
	t.Helper()
	// A stream that never delivers (buffered by some middleware) fails, not hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ls.URL+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header[k] = v
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestEventsGrantOnlyKindsTheUserMayList(t *testing.T) {
	ls := newStreamServer(t, allowKinds{"certificatesigningrequests": true})
	resp := ls.get(t, "/events?kinds=crds,csrs,nope&rows=csrs,crds", nil, ls.session(t))
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// No compression or buffering middleware may sit on the stream.
	if ce := resp.Header.Get("Content-Encoding"); ce != "" || resp.Uncompressed {
		t.Fatalf("the stream is encoded (%q): events would wait in a compressor's buffer", ce)
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == auth.CookieName {
			t.Errorf("the stream refreshed the session cookie: an open tab is not activity")
		}
	}
	r := sseclient.NewReader(resp.Body)
	hello, err := r.Next()
	if err != nil || hello.Event != live.HelloEvent || hello.Data != "csrs" {
		t.Fatalf("hello %+v %v: want only csrs granted", hello, err)
	}
	// No cursor: the rows must be fetched afresh, then the sticky state follows.
	seen := map[string]string{}
	for len(seen) < 3 {
		ev, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		seen[ev.Event] = ev.Data
	}
	if seen[live.ResyncEvent] != "csrs-rows" || !strings.Contains(seen["csrs"], `id="nav-count-csrs"`) {
		t.Fatalf("events %v", seen)
	}
	if _, ok := seen["status"]; !ok {
		t.Fatalf("events %v: want the status", seen)
	}
	for ev := range seen {
		if strings.HasPrefix(ev, "crds") {
			t.Fatalf("got %s events the user may not list", ev)
		}
	}
}

// An EventSource that gives up on an error status leaves the page silently
// stale: without a session the stream answers 200 with an event the page shows.
func TestEventsWithoutSessionTellThePage(t *testing.T) {
	ls := newStreamServer(t, allowKinds{})
	resp := ls.get(t, "/events?kinds=csrs", nil, &http.Cookie{Name: auth.CookieName, Value: "forged"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	ev, err := sseclient.NewReader(resp.Body).Next()
	if err != nil || ev.Event != sessionEndedEvent {
		t.Fatalf("event %+v %v", ev, err)
	}
	if !strings.Contains(ev.Data, `data-testid="banner-session-expired"`) || !strings.Contains(ev.Data, "login URL") {
		t.Fatalf("data %q", ev.Data)
	}
}

func TestEventsRefuseOtherOrigins(t *testing.T) {
	ls := newStreamServer(t, allowKinds{"certificatesigningrequests": true})
	sess := ls.session(t)
	for _, h := range []http.Header{
		{"Origin": {"http://evil.example"}},
		{"Origin": {"null"}},
		{"Sec-Fetch-Site": {"cross-site"}},
		{"Sec-Fetch-Site": {"same-site"}},
	} {
		if resp := ls.get(t, "/events?kinds=csrs", h, sess); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%v: status %d, want 403", h, resp.StatusCode)
		}
	}
	ok := ls.get(t, "/events?kinds=csrs", http.Header{"Origin": {ls.URL}, "Sec-Fetch-Site": {"same-origin"}}, sess)
	if ok.StatusCode != http.StatusOK {
		t.Errorf("same origin: status %d", ok.StatusCode)
	}
}

func TestPagesJoinTheStream(t *testing.T) {
	ls := newStreamServer(t, allowKinds{"certificatesigningrequests": true})
	req, _ := http.NewRequest(http.MethodGet, ls.URL+"/", nil)
	req.AddCookie(ls.session(t))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK { // an error page has the layout too
		t.Fatalf("home page: %s", resp.Status)
	}
	d, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	url, ok := d.Find("body").Attr("data-live-url")
	if !ok || !strings.HasPrefix(url, "/events?") || !strings.Contains(url, "since=") || !strings.Contains(url, "csrs") {
		t.Fatalf("data-live-url %q", url)
	}
	if d.Find("#nav-count-csrs").Text() != "1" || d.Find("#live-status[aria-live=polite]").Length() != 1 {
		t.Fatal("the layout lacks the live targets")
	}
}

func (c *liveCluster) Meta(id kube.KindID, name string) (metav1.Object, error) {
	if id != kube.CSRs {
		return nil, fmt.Errorf("no %s in this cache", id)
	}
	return c.CSR(name)
}

// A detail page's stream on a replica that did not render it (a cursor from
// another process) is told to resync only when this replica's cache holds
// another version of the page's object than the one it shows.
func TestEventsResyncADetailPageOnlyWhenItsObjectDiffers(t *testing.T) {
	ls := newStreamServer(t, allowKinds{"certificatesigningrequests": true})
	cookie := ls.session(t)
	for _, tc := range []struct {
		name, query string
		resync      bool
	}{
		{"the version shown is cached", "&object=csr-a&rv=7", false}, // newLiveCluster's version
		{"another version is cached", "&object=csr-a&rv=6", true},
		{"the object is gone", "&object=csr-gone&rv=7", true},
		{"a list page", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := ls.get(t, "/events?kinds=csrs&rows=csrs&since=otherreplica-12"+tc.query, nil, cookie)
			r := sseclient.NewReader(resp.Body)
			resync := false
			for {
				ev, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				if ev.Event == live.ResyncEvent {
					resync = true
				}
				if ev.Event == "csrs" { // the sticky count: after any resync
					break
				}
			}
			if resync != tc.resync {
				t.Fatalf("resync %v, want %v", resync, tc.resync)
			}
		})
	}
}
