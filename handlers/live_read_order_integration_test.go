//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// A detail page reads its live settings (the stream's cursor and the version
// of its object, handlers/live's Chrome) before it reads its object from the cache. These
// tests put a change in the window that order closes: the page's read of its
// object returns what the cache holds, then, before the page goes on, the
// object changes on the API server and the change is in the cache and
// published to the streams. The page then shows the old object; its stream,
// opened with what the page recorded, must tell the tab (a resync, or the
// change as an event). With the settings read after the object (as
// the code once did) they record the new version and a cursor past the
// change, the stream finds "the page shows what the cache holds", and the tab
// hears nothing.
//
// The window is reached through the handlers' own seam, Deps.Cluster: the
// real cache (kube.Cache on the devcluster) wrapped so that the page's one
// read of the named object runs the change before it returns. Nothing waits
// on a clock to order things: the change is awaited as an event on a stream,
// and the absence of the tab's resync is proved by a later change's row
// arriving first (a stream delivers in publishing order).

// changeWhileRead is the devcluster's cache, but the first read of one object
// through get runs change after reading it, before returning what it read.
type changeWhileRead struct {
	*kube.Cache
	name   string
	change func() error

	mu    sync.Mutex
	reads int    // reads of name through the hooked getter
	shown string // the resourceVersion the first read returned: what the page shows
	err   error  // change's error
}

func (c *changeWhileRead) readThen(name string, read metav1.Object, err error) {
	if name != c.name {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reads++; c.reads == 1 {
		if err != nil {
			c.err = err
			return
		}
		c.shown = read.GetResourceVersion()
		c.err = c.change()
	}
}

// fired checks that the page read its object through the hook and the
// change worked, and returns the version the page read.
func (c *changeWhileRead) fired(t *testing.T) string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		t.Fatalf("the change while the page was built: %v", c.err)
	}
	if c.reads == 0 {
		t.Fatal("the page never read its object through the hooked getter: the test did not reach the window")
	}
	return c.shown
}

// CSIDriver is a generic detail page's read (insight's CSIDriverDetail, through pages.go detail).
func (c *changeWhileRead) CSIDriver(name string) (*storagev1.CSIDriver, error) {
	d, err := c.Cache.CSIDriver(name)
	c.readThen(name, d, err)
	return d, err
}

// CSR is the CSR page's read (handlers/csrs csrShown).
func (c *changeWhileRead) CSR(name string) (*certificatesv1.CertificateSigningRequest, error) {
	r, err := c.Cache.CSR(name)
	c.readThen(name, r, err)
	return r, err
}

// readOrderCase is one detail page in the race.
type readOrderCase struct {
	kind kube.KindID
	// create makes an object of kind and returns its name; change changes
	// it (the change the page must not lose); marker changes another object
	// of kind and returns that one's name.
	create func(t *testing.T) string
	change func(name string) error
	marker func(t *testing.T) string
}

func TestDetailPageReadsItsLiveSettingsBeforeItsObject(t *testing.T) {
	s := newLiveStack(t)
	access, err := kube.NewAccess(testcluster.RestConfig(t, testcluster.Admin))
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ctx := context.Background()
	annotate := func(name string) error {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"clusterdesk.test/changed":"%d"}}}`, time.Now().UnixNano())
		_, err := cs.StorageV1().CSIDrivers().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	}
	driver := func(t *testing.T) string {
		name := fmt.Sprintf("it-read-order-%d.clusterdesk.test", time.Now().UnixNano())
		if _, err := cs.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.StorageV1().CSIDrivers().Delete(context.Background(), name, metav1.DeleteOptions{}) })
		return name
	}
	// A signer no controller of the devcluster acts on: nothing but the test
	// changes these CSRs.
	csr := func(t *testing.T) string {
		return testcluster.CreateCSR(t, testcluster.CSR{Signer: "example.com/clusterdesk-read-order"})
	}
	for _, tc := range []readOrderCase{
		{kind: kube.CSIDrivers, create: driver, change: annotate, marker: driver},
		// The race as it was seen: the approval lands while the page is built.
		{kind: kube.CSRs, create: csr, marker: csr, change: func(name string) error {
			r, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			r.Status.Conditions = append(r.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
				Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "ReadOrderTest", Message: "approved while the page was built",
			})
			_, err = cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, r, metav1.UpdateOptions{})
			return err
		}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) { testReadOrder(t, s, access, tc) })
	}
}

func testReadOrder(t *testing.T, s *liveStack, access Access, tc readOrderCase) {
	rowsEvent, rowOf := rowsTopic(tc.kind), func(name string) string { return `id="` + rowID(tc.kind, name) + `"` }
	// A tab of the kind's list, to learn when a change has been published.
	srv, sess := s.server(t, access)
	watcher := subscribe(t, srv, sess, "kinds="+string(tc.kind)+"&rows="+string(tc.kind)+"&since="+s.streams.Cursor())
	await(t, watcher, 10*time.Second, "hello", func(ev sseclient.Event) bool { return ev.Event == live.HelloEvent })
	published := func(name string) error {
		deadline := time.After(20 * time.Second) // a bound on failure only
		for {
			select {
			case ev, ok := <-watcher:
				if !ok {
					return fmt.Errorf("the watching stream ended")
				}
				if ev.Event == rowsEvent && strings.Contains(ev.Data, rowOf(name)) {
					return nil
				}
			case <-deadline:
				return fmt.Errorf("%s's change was not published", name)
			}
		}
	}

	name := tc.create(t)
	if err := published(name); err != nil { // its creation: the hook below awaits the change's event only
		t.Fatal(err)
	}
	cluster := &changeWhileRead{Cache: s.cache, name: name, change: func() error {
		if err := tc.change(name); err != nil {
			return err
		}
		return published(name)
	}}
	page, pageSess := s.serverWith(t, access, func(d *Deps) { d.Cluster = cluster })
	url := detailLiveURL(t, page, pageSess, "/"+string(tc.kind)+"/"+name)
	shown := cluster.fired(t)

	// The tab's stream, as the page's script opens it.
	events := subscribe(t, page, pageSess, strings.TrimPrefix(url, "/events?"))
	await(t, events, 10*time.Second, "hello", func(ev sseclient.Event) bool { return ev.Event == live.HelloEvent })
	// Another object's change, published after the stream joined: whatever
	// the tab is told of the page's object comes before its row.
	marker := tc.marker(t)
	told := false
	await(t, events, 20*time.Second, "the later change's row", func(ev sseclient.Event) bool {
		switch {
		case ev.Event == live.ResyncEvent && ev.Data == rowsEvent:
			told = true
		case ev.Event == rowsEvent && strings.Contains(ev.Data, rowOf(name)):
			told = true
		}
		return ev.Event == rowsEvent && strings.Contains(ev.Data, rowOf(marker))
	})
	if !told {
		t.Fatalf("the %s page showed %s as read before a change, and its stream (%s) was told nothing of the change", tc.kind, name, url)
	}
	// And the version the page recorded is the one it shows (read before the
	// object, with nothing changing it in between). Checked last: the tab's
	// stream is what must fail when the order is reversed.
	if !strings.Contains(url, "&rv="+shown+"&") && !strings.HasSuffix(url, "&rv="+shown) {
		t.Fatalf("the page showed version %s; its stream's address %q names another", shown, url)
	}
}

// detailLiveURL gets a detail page as the tab would and returns its stream's
// address (data-live-url), which must name the page's object and version.
func detailLiveURL(t *testing.T, srv *httptest.Server, sess *http.Cookie, path string) string {
	t.Helper()
	doc := getPage(t, srv, sess, path)
	url, _ := doc.Find("body").Attr("data-live-url")
	if !strings.HasPrefix(url, "/events?") || !strings.Contains(url, "object=") || !strings.Contains(url, "rv=") {
		t.Fatalf("%s: data-live-url %q names no object version", path, url)
	}
	return url
}

// getPage gets path with the session cookie sess, as a tab would, and parses
// it; anything but 200 fails the test.
func getPage(t *testing.T, srv *httptest.Server, sess *http.Cookie, path string) *goquery.Document {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	req.AddCookie(sess)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", path, resp.StatusCode)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
