package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/handlers/internal/livetest"
	liveupdates "github.com/clusterdesk/clusterdesk/handlers/live"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
)

// liveCluster is the live updates' fake cache (handlers/internal/livetest).
type liveCluster = livetest.Cluster

// The live updates' protocol names (handlers/live), which web/js/live.js
// reads: the tests below look for them on the stream.
const (
	statusTopic         = liveupdates.StatusTopic
	sessionEndedEvent   = liveupdates.SessionEndedEvent
	tooManyStreamsEvent = liveupdates.TooManyStreamsEvent
	csrViewEvent        = liveupdates.CSRViewEvent
	maxLiveRows         = liveupdates.MaxRows
)

var (
	rowsTopic        = liveupdates.RowsTopic
	metricsRowsTopic = liveupdates.MetricsRowsTopic
	rowID            = liveupdates.RowID
	csrPageHash      = liveupdates.CSRPageHash
)

func newLiveCluster(names ...string) *liveCluster { return livetest.NewCluster(names...) }

// doc parses a fragment, byEvent keys a batch's messages by event (livetest).
var (
	doc     = livetest.Doc
	byEvent = livetest.ByEvent
)

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

// A view the page never asks for is refused, and so is any view to a user
// who may not list CSRs: views are computed only for what a person may open.
func TestEventsRefuseViewsThePageDoesNotOffer(t *testing.T) {
	ls := newStreamServer(t, allowKinds{"certificatesigningrequests": true})
	sess := ls.session(t)
	for _, view := range []string{"sort%3Dsecret", "state%3Dpending%26state%3Ddenied", "page%3D0", "selector%3Da%2Bin%2B%28", "other%3D1"} {
		if resp := ls.get(t, "/events?kinds=csrs&rows=csrs&view="+view, nil, sess); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("view=%s: status %d, want 400", view, resp.StatusCode)
		}
	}
	if resp := ls.get(t, "/events?kinds=csrs&view=state%3Dpending", nil, sess); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a view without the queue's rows: status %d, want 403", resp.StatusCode)
	}
	other := newStreamServer(t, allowKinds{"customresourcedefinitions": true})
	if resp := other.get(t, "/events?kinds=csrs,crds&rows=csrs&view=state%3Dpending", nil, other.session(t)); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a view of a queue the user may not list: status %d, want 403", resp.StatusCode)
	}
	if ls.lv.CSRViews()+other.lv.CSRViews() != 0 {
		t.Error("a refused view was kept")
	}
}
