//go:build integration

package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/views/components"
)

// batchGate holds back the hub's batch that names one CSR until released:
// the change is then in the cache (the informer stores an object before it
// notifies) but published to no stream.
type batchGate struct {
	mu       sync.Mutex
	name     string        // the CSR whose batch to hold; "" holds none
	entered  chan struct{} // closed when that batch is held
	released chan struct{}
	once     sync.Once
}

func newBatchGate() *batchGate {
	return &batchGate{entered: make(chan struct{}), released: make(chan struct{})}
}

func (g *batchGate) hold(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.name = name
}

func (g *batchGate) release() { g.once.Do(func() { close(g.released) }) }

func (g *batchGate) wrap(render live.Renderer) live.Renderer {
	return func(kind kube.KindID, names []string, status bool) []live.Message {
		g.mu.Lock()
		held := g.name != "" && kind == kube.CSRs && slices.Contains(names, g.name)
		if held {
			g.name = ""
		}
		g.mu.Unlock()
		if held {
			close(g.entered)
			heldUntil(g.released)
		}
		return render(kind, names, status)
	}
}

// A queue tab whose stream opens a view while a CSR change is in the cache
// but not yet published: the view's first page is computed from the cache
// as the stream opens (openCSRView), so it holds the change; the tab's page,
// rendered before the change, does not. The tab must be told (a resync, or
// the change among the view's ops), not left showing an approved request as
// pending.
func TestQueueTabOpeningAViewGetsAChangeItsPageLacks(t *testing.T) {
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	signer := "example.com/it-view-join-" + uniq("s")
	gate := newBatchGate()
	s := newLiveStackWith(t, liveHubWraps{render: gate.wrap})
	t.Cleanup(gate.release) // after the stack's: it runs first, never leaving the hub blocked
	access, err := kube.NewAccess(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	srv, sess := s.server(t, access)
	// A tab of the plain CSR list, to learn when a batch is published.
	watcher := subscribe(t, srv, sess, "kinds=csrs&rows=csrs&since="+s.streams.Cursor())
	await(t, watcher, 10*time.Second, "hello", func(ev sseclient.Event) bool { return ev.Event == live.HelloEvent })
	published := func(name string) {
		t.Helper()
		await(t, watcher, 20*time.Second, name+"'s row", func(ev sseclient.Event) bool {
			return ev.Event == rowsTopic(kube.CSRs) && strings.Contains(ev.Data, `id="`+rowID(kube.CSRs, name)+`"`)
		})
	}

	x := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "x", Signer: signer})
	published(x)
	// Every state, oldest first: the approval changes x's row in place (no
	// row comes, goes or moves), so nothing but an op for x or a resync tells
	// the tab; a change of the rows' keys would make it fetch the view again
	// at the next op (live-csr.js compares the ops' data-hash).
	view := csrqueue.ParseQuery(url.Values{"signer": {signer}, "sort": {"age"}}).Values().Encode()
	stream, keys := queueLiveURL(t, srv, sess, "/csrs?"+view, x)

	gate.hold(x)
	r, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, x, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.Status.Conditions = append(r.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "ViewJoinTest", Message: "approved as the tab's stream opens",
	})
	if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, x, r, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gate.entered:
	case <-time.After(20 * time.Second): // a bound on failure only
		t.Fatal("the approval's batch never reached the hub")
	}

	// The tab's stream opens its view now, the approval cached, unpublished.
	events := subscribe(t, srv, sess, strings.TrimPrefix(stream, "/events?"))
	await(t, events, 10*time.Second, "hello", func(ev sseclient.Event) bool { return ev.Event == live.HelloEvent })
	gate.release()
	published(x)
	// Another request of the signer, after the approval went out: whatever
	// the tab is told of x comes before the view's insert of y, or with it.
	y := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "y", Signer: signer})
	told := false
	await(t, events, 20*time.Second, "y in the view", func(ev sseclient.Event) bool {
		switch ev.Event {
		case live.ResyncEvent:
			told = told || ev.Data == rowsTopic(kube.CSRs)
		case csrViewEvent:
			html, err := page.InflateCSRView([]byte(ev.Data))
			if err != nil {
				t.Fatal(err)
			}
			up := viewUpdate(t, html)
			told = told || up.keys[rowID(kube.CSRs, x)] || up.refetch
			if !up.keys[rowID(kube.CSRs, y)] {
				return false
			}
			// The tab applies the insert; rows other than the server's
			// (by their keys) make it fetch the view again.
			told = told || !insertKeepsHash(up, keys)
			return true
		}
		return false
	})
	if !told {
		t.Fatalf("the tab's page shows %s pending; its stream (%s) was told nothing of the approval", x, stream)
	}
}

// csrViewUpdateOps is what a test reads of a view's update.
type csrViewUpdateOps struct {
	refetch    bool            // the view's own "fetch me again"
	keys       map[string]bool // the rows its ops name
	insert     string          // the key of its one op, an insert; "" otherwise
	after      string          // that insert's anchor ("" for the top)
	serverHash string          // the rows' keys' hash after the ops (data-hash)
}

func viewUpdate(t *testing.T, html []byte) csrViewUpdateOps {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(html)))
	if err != nil {
		t.Fatal(err)
	}
	ops := doc.Find("[data-csr-view-ops]")
	_, refetch := ops.Attr("data-refetch")
	u := csrViewUpdateOps{refetch: refetch, keys: map[string]bool{}}
	u.serverHash, _ = ops.Attr("data-hash")
	li := ops.Find("li[data-op]")
	li.Each(func(_ int, s *goquery.Selection) {
		k, _ := s.Attr("data-key")
		u.keys[k] = true
	})
	if op, _ := li.Attr("data-op"); li.Length() == 1 && op == "insert" {
		u.insert, _ = li.Attr("data-key")
		u.after, _ = li.Attr("data-after")
	}
	return u
}

// insertKeepsHash applies an update of one insert to the page's row keys as
// live-csr.js does and reports whether they then hash as the server's rows
// do: if not, the tab fetches the view again. Any other update counts as a
// refetch.
func insertKeepsHash(u csrViewUpdateOps, keys []string) bool {
	if u.insert == "" {
		return false
	}
	var rows []csrqueue.PageRow
	if u.after == "" {
		rows = append(rows, csrqueue.PageRow{Key: u.insert})
	}
	for _, k := range keys {
		rows = append(rows, csrqueue.PageRow{Key: k})
		if k == u.after {
			rows = append(rows, csrqueue.PageRow{Key: u.insert})
		}
	}
	return csrPageHash(rows) == u.serverHash
}

// queueLiveURL gets a queue page as a tab would, checks it lists name, and
// returns its stream's address (data-live-url, naming the view) and its rows'
// keys in order.
func queueLiveURL(t *testing.T, srv *httptest.Server, sess *http.Cookie, path, name string) (string, []string) {
	t.Helper()
	doc := getPage(t, srv, sess, path)
	if doc.Find("#"+rowID(kube.CSRs, name)).Length() != 1 {
		t.Fatalf("GET %s does not list %s", path, name)
	}
	u, _ := doc.Find("body").Attr("data-live-url")
	if !strings.HasPrefix(u, "/events?") || !strings.Contains(u, "view=") {
		t.Fatalf("%s: data-live-url %q names no view", path, u)
	}
	var keys []string
	doc.Find("#" + components.ListTableID + " tbody tr[id]").Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("id")
		keys = append(keys, id)
	})
	return u, keys
}

// pausedPublisher publishes nothing while paused (a publish under way
// finishes first): no cursor moves, so a stream that joins meanwhile is
// resynced for no batch.
type pausedPublisher struct {
	sync.Mutex
	out live.Publisher
}

func (p *pausedPublisher) Publish(msgs ...live.Message) {
	p.Lock()
	defer p.Unlock()
	p.out.Publish(msgs...)
}

// A queue tab whose page is what its view holds is not resynced as its
// stream opens (a resync makes it fetch the view again): the page's rows
// and the view's compare equal, whether the tab opens the view or joins it
// open, and whether the user's page shows the actions or not. Publishing is
// paused from the page's render to the join: other tests' requests (their
// cleanups) must not resync the tab by its cursor.
func TestQueueTabShowingItsViewIsNotResynced(t *testing.T) {
	paused := &pausedPublisher{}
	s := newLiveStackWith(t, liveHubWraps{out: func(out live.Publisher) live.Publisher { paused.out = out; return paused }})
	signer := "example.com/it-view-same-" + uniq("s")
	testcluster.CreateCSR(t, testcluster.CSR{Suffix: "a", Signer: signer})
	b := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "b", Signer: signer})
	waitFor(t, "the cache to hold the requests", 20*time.Second, func() bool { _, err := s.cache.CSR(b); return err == nil })
	view := csrqueue.ParseQuery(url.Values{"signer": {signer}}).Values().Encode()
	for _, who := range []string{testcluster.Admin, testcluster.Approver, testcluster.Admin} {
		access, err := kube.NewAccess(testcluster.RestConfig(t, who))
		if err != nil {
			t.Fatal(err)
		}
		srv, sess := s.server(t, access)
		paused.Lock()
		stream, _ := queueLiveURL(t, srv, sess, "/csrs?"+view, b)
		if !strings.Contains(stream, "&shows=") {
			t.Fatalf("the stream's address %q says nothing of the page's rows", stream)
		}
		events := subscribe(t, srv, sess, strings.TrimPrefix(stream, "/events?"))
		// The join sends hello, then any resync, then the sticky counts.
		await(t, events, 10*time.Second, "the CSR count", func(ev sseclient.Event) bool {
			if ev.Event == live.ResyncEvent {
				t.Fatalf("%s's tab showing its view was resynced (%s)", who, stream)
			}
			return ev.Event == string(kube.CSRs)
		})
		paused.Unlock()
	}
}
