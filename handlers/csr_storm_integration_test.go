//go:build integration

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// A kubelet-like retry storm on the real API server: 120 pending requests
// with one signer, subject and requester are one group row; the preview of
// "approve the newest, deny the rest" names each request with its UID; one
// request replaced between preview and confirm gets its own refused line;
// on the API server the newest is approved and the others denied.
func TestCSRStormOnTheAPIServer(t *testing.T) {
	const n = 120
	ls := newLiveServer(t, testcluster.Admin, false)
	sess := ls.login(t)
	// A subject no other test uses, so the storm is this test's alone.
	spec := testcluster.CSR{Signer: certificatesv1.KubeAPIServerClientSignerName, CommonName: fmt.Sprintf("it-storm-%d", time.Now().UnixNano())}
	names := make([]string, n)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				names[i] = testcluster.CreateCSR(t, spec.With(fmt.Sprintf("s%03d", i)))
			}
		})
	}
	wg.Wait()
	ls.waitCached(t, names...)
	// Creation times have one-second resolution; the name breaks ties, so the
	// newest is the latest-created name in the storm's order.
	newest := names[0]
	var latest time.Time
	for _, nm := range names {
		c, _ := ls.cache.CSR(nm)
		if ts := c.CreationTimestamp.Time; ts.After(latest) || ts.Equal(latest) && nm > newest {
			latest, newest = ts, nm
		}
	}

	rec := ls.do(newGet("/csrs?q="+url.QueryEscape(spec.CommonName), sess))
	size := rec.Body.Len()
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil || rec.Code != http.StatusOK {
		t.Fatalf("queue: status %d, %v", rec.Code, err)
	}
	group := doc.Find(`[data-testid="group-row"]`)
	if group.Length() != 1 || group.Find(`[data-testid="group-count"]`).Text() != fmt.Sprint(n) || doc.Find(`[data-testid="list-row"]`).Length() != 0 {
		t.Fatalf("one group row of %d and no request rows: %d groups, %d rows", n, group.Length(), doc.Find(`[data-testid="list-row"]`).Length())
	}
	if size > 64<<10 {
		t.Errorf("the queue with one storm row is %d bytes", size)
	}
	id := group.AttrOr("data-csr-group", "")

	// One request's page counts the others and names none.
	_, detail, _ := ls.get(t, sess, "/csrs/"+names[3])
	if f := detail.Find(`[data-check="duplicate"]`).Text(); !strings.Contains(f, fmt.Sprintf("%d other pending requests for this signer and subject", n-1)) || strings.Contains(f, names[4]) {
		t.Errorf("duplicate finding on the request's page: %q", f)
	}

	code, preview, _ := ls.get(t, sess, "/csrs/groups/"+id+"?action=approve-newest")
	if code != http.StatusOK {
		t.Fatalf("preview: status %d", code)
	}
	items := preview.Find(`[data-testid="group-item"]`)
	if items.Length() != n || items.First().AttrOr("data-name", "") != newest || items.First().AttrOr("data-approve", "") != "true" ||
		items.First().AttrOr("data-uid", "") != ls.uid(t, newest) {
		t.Fatalf("preview: %d items, first %s approve=%s, want %s approved", items.Length(), items.First().AttrOr("data-name", ""), items.First().AttrOr("data-approve", ""), newest)
	}
	form := url.Values{"action": {"approve-newest"}, "message": {"storm from the integration test"}}
	preview.Find(`[data-testid="group-form"] input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		if k := s.AttrOr("name", ""); k == "approve" || k == "deny" {
			form.Add(k, s.AttrOr("value", ""))
		}
	})

	// Someone replaces one request of the storm after the preview.
	replaced := names[10]
	if replaced == newest {
		replaced = names[11]
	}
	newUID := testcluster.RecreateCSR(t, replaced, spec)

	res := ls.post(t, sess, "/csrs/groups/"+id+"/decide", form)
	if res.Code != http.StatusOK {
		t.Fatalf("decide: status %d", res.Code)
	}
	out, err := goquery.NewDocumentFromReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	line := out.Find(`[data-testid="bulk-result"][data-name="` + replaced + `"]`)
	if line.AttrOr("data-replaced", "") != "true" || !strings.Contains(line.Text(), csrReplacedText) {
		t.Errorf("the replaced request's own line: %q", line.Text())
	}
	if s := strings.Join(strings.Fields(out.Find(`[data-testid="bulk-summary"]`).Text()), " "); s != fmt.Sprintf("Decided %d of %d; 1 failed", n-1, n) {
		t.Errorf("summary %q", s)
	}

	cs := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	for _, nm := range names {
		c, err := cs.CertificatesV1().CertificateSigningRequests().Get(context.Background(), nm, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, cond := range c.Status.Conditions {
			types = append(types, string(cond.Type))
		}
		switch got := strings.Join(types, ","); {
		case nm == replaced:
			if c.UID != newUID || got != "" {
				t.Errorf("the replacement %s must stay undecided: %s", nm, got)
			}
		case nm == newest:
			if !strings.HasPrefix(got, "Approved") {
				t.Errorf("the newest %s: %s, want Approved", nm, got)
			}
		case got != "Denied":
			t.Errorf("%s: %s, want Denied", nm, got)
		}
	}
}
