//go:build integration

package faults

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

const (
	editors       = 20 // goroutines, each a browser with a session of its own
	writesPerUser = 1  // successful applies each one makes, retrying after conflicts
)

// success is one apply that the console reported as written.
type success struct {
	editor, seq int
	from, to    int64 // resource versions: the one the editor started from, the one stored
}

// TestConcurrentEditorsLoseNoUpdate has 20 editors change the same CSIDriver
// at once through the console's editor (GET the editor, POST its form to the
// apply route, with a session each, same-origin as a browser sends it), each
// retrying after a conflict until its write is in. Every apply either
// succeeds or answers 409 with the conflict notice; the successful writes form
// one chain (each started from the version the previous one stored, so none
// overwrote a change it had not seen), and the object ends as the last
// successful write left it.
func TestConcurrentEditorsLoseNoUpdate(t *testing.T) {
	testcluster.Require(t)
	other := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	c := startConsole(t, testcluster.RestConfig(t, testcluster.Admin))
	driver := createCSIDriver(t, other)
	path := "/csidrivers/" + driver
	poll(t, "the cache to hold the CSIDriver", 30*time.Second, func() bool { _, err := c.cache.CSIDriver(driver); return err == nil })

	clients := make([]*http.Client, editors)
	for i := range clients {
		clients[i] = c.signIn(t)
	}
	updated := regexp.MustCompile(`was updated: version (\d+) → (\d+)\.`)
	var (
		mu        sync.Mutex
		successes []success
		conflicts int
		problems  []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	began := time.Now()
	for e := range editors {
		wg.Go(func() {
			<-start
			for seq := 0; seq < writesPerUser; {
				if len(problems) > 0 {
					return
				}
				doc, code, err := fetch(clients[e], http.MethodGet, c.srv.URL+path+"/edit", nil)
				if err != nil || code != http.StatusOK {
					fail("editor %d: open: %d %v", e, code, err)
					return
				}
				form, action, err := readEditorForm(doc)
				if err != nil {
					fail("editor %d: %v", e, err)
					return
				}
				from, _ := strconv.ParseInt(form.Get("resourceVersion"), 10, 64)
				form.Set("yaml", withLabel(form.Get("yaml"), fmt.Sprintf("e%d-w%d", e, seq)))
				doc, code, err = fetch(clients[e], http.MethodPost, c.srv.URL+action, form)
				switch {
				case err != nil:
					fail("editor %d: apply: %v", e, err)
					return
				case code == http.StatusOK && doc.Find(`[data-testid="toast-result"]`).Length() > 0:
					m := updated.FindStringSubmatch(doc.Find(`[data-testid="toast-result"]`).Text())
					if m == nil {
						fail("editor %d: applied, but the result says: %s", e, doc.Find(`[data-testid="toast-result"]`).Text())
						return
					}
					f, _ := strconv.ParseInt(m[1], 10, 64)
					to, _ := strconv.ParseInt(m[2], 10, 64)
					if f != from {
						fail("editor %d: started from %d, the result says %d", e, from, f)
					}
					mu.Lock()
					successes = append(successes, success{editor: e, seq: seq, from: from, to: to})
					mu.Unlock()
					seq++
				case code == http.StatusConflict && doc.Find(`[data-testid="conflict"]`).Length() == 1 &&
					strings.Contains(doc.Find(`[data-testid="conflict"]`).Text(), "changed") &&
					strings.Contains(doc.Find(`textarea[name="yaml"]`).Text(), fmt.Sprintf("e%d-w%d", e, seq)):
					mu.Lock()
					conflicts++
					mu.Unlock()
				default:
					fail("editor %d: apply answered %d, neither success nor the conflict notice with the text kept: %.400s", e, code, text(doc))
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	took := time.Since(began)
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		t.FailNow()
	}
	t.Logf("%d editors: %d writes, %d conflicts in %s", editors, len(successes), conflicts, took.Round(time.Millisecond))
	if len(successes) != editors*writesPerUser {
		t.Fatalf("%d successful writes, want %d", len(successes), editors*writesPerUser)
	}
	if conflicts == 0 {
		t.Errorf("no conflict among %d concurrent editors: the test did not exercise concurrency", editors)
	}

	// One chain: sorted by the version each stored, every write started from
	// the version the previous one stored.
	slices.SortFunc(successes, func(a, b success) int { return int(a.to - b.to) })
	for i := 1; i < len(successes); i++ {
		if prev, cur := successes[i-1], successes[i]; cur.from != prev.to {
			t.Errorf("write %d (editor %d) started from version %d, but version %d (editor %d) was stored before it: an update was overwritten unseen",
				i, cur.editor, cur.from, prev.to, prev.editor)
		}
	}
	last := successes[len(successes)-1]
	got, err := other.StorageV1().CSIDrivers().Get(context.Background(), driver, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("e%d-w%d", last.editor, last.seq)
	if got.Labels["faults-editor"] != want || got.ResourceVersion != strconv.FormatInt(last.to, 10) {
		t.Errorf("the object has label %q at version %s; the last successful write was %q storing version %d",
			got.Labels["faults-editor"], got.ResourceVersion, want, last.to)
	}
}

// fetch sends a request with a browser's session (same-origin for a POST),
// following redirects, and parses the answer.
func fetch(client *http.Client, method, u string, form url.Values) (*goquery.Document, int, error) {
	var req *http.Request
	var err error
	if form != nil {
		req, err = http.NewRequest(method, u, strings.NewReader(form.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
		}
	} else {
		req, err = http.NewRequest(method, u, nil)
	}
	if err != nil {
		return nil, 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	return doc, resp.StatusCode, err
}
