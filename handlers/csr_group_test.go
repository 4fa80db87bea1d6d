package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// stormCluster holds a storm of n pending requests from "kubelet-w" (one
// signer, subject and requester), storm-0 the oldest, and one request of
// another user. It reports changes like kube.Cache and counts its lists.
type stormCluster struct {
	*csrCluster
	lists    atomic.Int32
	onChange []func(kube.KindID, string)
}

func newStormCluster(t testing.TB, n int) *stormCluster {
	now := time.Now()
	body := testfixtures.SubjectPEM(t, "kubelet-w")
	var items []*certificatesv1.CertificateSigningRequest
	for i := range n {
		c := fakeCSR(t, fmt.Sprintf("storm-%d", i), apiClientSigner, "kubelet-w", now.Add(time.Duration(i-n)*time.Minute))
		c.Spec.Request = body
		items = append(items, c)
	}
	items = append(items, fakeCSR(t, "alone", apiClientSigner, "ann", now.Add(-time.Hour)))
	return &stormCluster{csrCluster: newCSRCluster(items...)}
}

func (c *stormCluster) CSRs() ([]*certificatesv1.CertificateSigningRequest, error) {
	c.lists.Add(1)
	return c.csrCluster.CSRs()
}

func (c *stormCluster) OnChange(fn func(kube.KindID, string)) { c.onChange = append(c.onChange, fn) }

func (c *stormCluster) changed(name string) {
	for _, fn := range c.onChange {
		fn(kube.CSRs, name)
	}
}

func attrs(doc *goquery.Document, sel, attr string) []string {
	return doc.Find(sel).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr(attr, "") })
}

// A storm is one group row: its count, its newest request, a link to its
// requests one by one, and its two actions; its requests are no rows of
// their own, and tab counts still count requests.
func TestCSRStormGroupRow(t *testing.T) {
	cl := newStormCluster(t, 5)
	ts := newCSRTestServer(t, cl, signerAccess{signers: map[string]bool{apiClientSigner: true}}, false)
	sess := ts.login(t)

	rec, doc := ts.request(t, sess, http.MethodGet, "/csrs", nil, false)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	group := doc.Find(`[data-testid="group-row"]`)
	if group.Length() != 1 || group.Find(`[data-testid="group-count"]`).Text() != "5" || !strings.Contains(group.Text(), "storm-4") {
		t.Fatalf("one group row of 5, newest storm-4: %q", group.Text())
	}
	if got := attrs(doc, `[data-testid="list-row"]`, "data-name"); !slices.Equal(got, []string{"alone"}) {
		t.Errorf("the storm's requests are no rows of their own: %v", got)
	}
	if n := strings.TrimSpace(doc.Find(`[data-testid="tab-pending"] [data-testid="tab-count"]`).Text()); n != "6" {
		t.Errorf("the pending tab counts requests: %s", n)
	}
	id := group.AttrOr("data-csr-group", "")
	if href := group.Find(`[data-testid="group-link"]`).AttrOr("href", ""); href != "/csrs?group="+id {
		t.Errorf("group link %q", href)
	}
	if group.Find(`[data-testid="group-approve-newest"]`).AttrOr("href", "") != "/csrs/groups/"+id+"?action=approve-newest" ||
		group.Find(`[data-testid="group-deny-all"]`).AttrOr("href", "") != "/csrs/groups/"+id+"?action=deny-all" {
		t.Errorf("group actions: %q", group.Find(`a.btn`).Text())
	}

	// The group's view: its requests one by one, selectable, under a banner.
	_, doc = ts.request(t, sess, http.MethodGet, "/csrs?group="+id, nil, false)
	if got := attrs(doc, `[data-testid="list-row"]`, "data-name"); !slices.Equal(got, []string{"storm-0", "storm-1", "storm-2", "storm-3", "storm-4"}) {
		t.Errorf("group view rows %v", got)
	}
	if doc.Find(`[data-testid="group-banner"]`).Length() != 1 || doc.Find(`[data-testid="row-select"]`).Length() != 5 {
		t.Error("the group view has its banner and a selection box per request")
	}
	// Each row says how many others there are and links them, never names them.
	f := doc.Find(`#row-csrs-storm-0 [data-check="duplicate"]`)
	if !strings.Contains(f.Text(), "4 other pending requests for this signer and subject") || strings.Contains(f.Text(), "storm-1") ||
		!strings.HasPrefix(f.Find(`[data-testid="finding-link"]`).AttrOr("href", ""), "/csrs?group=d-") {
		t.Errorf("duplicate finding %q", f.Text())
	}

	// A user who may not decide for the signer sees the group without actions
	// and cannot open a preview.
	ro := newCSRTestServer(t, cl, signerAccess{signers: map[string]bool{"example.com/other": true}}, false)
	rs := ro.login(t)
	_, doc = ro.request(t, rs, http.MethodGet, "/csrs", nil, false)
	if doc.Find(`[data-testid="group-row"]`).Length() != 1 || doc.Find(`[data-testid="group-approve-newest"]`).Length() != 0 {
		t.Error("no group actions without the right to decide")
	}
	if rec, _ := ro.request(t, rs, http.MethodGet, "/csrs/groups/"+id+"?action=deny-all", nil, false); rec.Code != http.StatusForbidden {
		t.Errorf("preview without the right: status %d", rec.Code)
	}
}

// "Approve the newest, deny the rest": the preview lists each request with
// its UID and decision; the confirmation decides each on its own with those
// UIDs; a request replaced since the preview gets its own refused line and
// the others proceed.
func TestCSRStormGroupAction(t *testing.T) {
	cl := newStormCluster(t, 5)
	ts := newCSRTestServer(t, cl, signerAccess{signers: map[string]bool{apiClientSigner: true}}, false)
	sess := ts.login(t)
	_, doc := ts.request(t, sess, http.MethodGet, "/csrs", nil, false)
	id := doc.Find(`[data-testid="group-row"]`).AttrOr("data-csr-group", "")

	rec, doc := ts.request(t, sess, http.MethodGet, "/csrs/groups/"+id+"?action=approve-newest", nil, false)
	if rec.Code != http.StatusOK {
		t.Fatalf("preview: status %d", rec.Code)
	}
	items := doc.Find(`[data-testid="group-item"]`)
	if items.Length() != 5 || items.First().AttrOr("data-name", "") != "storm-4" || items.First().AttrOr("data-approve", "") != "true" ||
		items.First().AttrOr("data-uid", "") != string(uidFor("storm-4")) {
		t.Fatalf("preview items: approve storm-4 first, then deny 4: %q", items.Text())
	}
	if got := attrs(doc, `[data-testid="group-form"] input[name="deny"]`, "value"); !slices.Equal(got, []string{ref("storm-0"), ref("storm-1"), ref("storm-2"), ref("storm-3")}) {
		t.Errorf("deny fields %v", got)
	}
	if s := doc.Find(`[data-testid="group-summary"]`).Text(); !strings.Contains(s, "approve 1, deny 4") {
		t.Errorf("summary %q", s)
	}
	if len(ts.writer.decided) != 0 {
		t.Fatal("the preview decided something")
	}

	// storm-2 is deleted and created again under its name before the confirm.
	gr := schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}
	repl := fakeCSR(t, "storm-2", apiClientSigner, "mallory", time.Now())
	repl.UID = "11111111-2222-4333-8444-555555555555"
	ts.writer.errs["storm-2"] = &kube.ReplacedError{Name: "storm-2", Seen: uidFor("storm-2"), Current: repl, Err: apierrors.NewConflict(gr, "storm-2", fmt.Errorf("Precondition failed"))}

	form := url.Values{"action": {"approve-newest"}, "message": {"kubelet retry storm"}}
	doc.Find(`[data-testid="group-form"] input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		if n := s.AttrOr("name", ""); n == "approve" || n == "deny" {
			form.Add(n, s.AttrOr("value", ""))
		}
	})
	rec, doc = ts.request(t, sess, http.MethodPost, "/csrs/groups/"+id+"/decide", form, false)
	if rec.Code != http.StatusOK {
		t.Fatalf("decide: status %d", rec.Code)
	}
	if !ts.writer.approve["storm-4"] || len(ts.writer.decided) != 4 {
		t.Errorf("storm-4 approved and three denied, got %v %v", ts.writer.decided, ts.writer.approve)
	}
	for _, n := range []string{"storm-0", "storm-1", "storm-3"} {
		if a, ok := ts.writer.approve[n]; !ok || a {
			t.Errorf("%s should be denied", n)
		}
	}
	for i, n := range ts.writer.decided {
		if ts.writer.uids[i] != uidFor(n) {
			t.Errorf("%s decided with UID %s, not the previewed one", n, ts.writer.uids[i])
		}
	}
	line := doc.Find(`[data-testid="bulk-result"][data-name="storm-2"]`)
	if line.AttrOr("data-replaced", "") != "true" || !strings.Contains(line.Text(), csrReplacedText) {
		t.Errorf("storm-2's own refused line: %q", line.Text())
	}
	if ok := attrs(doc, `[data-testid="bulk-result"][data-ok="true"]`, "data-name"); len(ok) != 4 {
		t.Errorf("four lines succeeded: %v", ok)
	}
	if s := doc.Find(`[data-testid="bulk-summary"]`).Text(); s != "Decided 4 of 5; 1 failed" {
		t.Errorf("summary %q", s)
	}
	if !strings.Contains(doc.Find(`[data-testid="bulk-result"][data-name="storm-4"]`).Text(), "approved.") {
		t.Error("the newest's line says approved")
	}

	// Refused before any write: two approvals, or one request both ways.
	before := len(ts.writer.decided)
	for _, bad := range []url.Values{
		{"approve": {ref("storm-0"), ref("storm-1")}},
		{"approve": {ref("storm-0")}, "deny": {ref("storm-0")}},
		{},
	} {
		if rec, _ := ts.request(t, sess, http.MethodPost, "/csrs/groups/"+id+"/decide", bad, false); rec.Code != http.StatusBadRequest {
			t.Errorf("%v: status %d, want 400", bad, rec.Code)
		}
	}
	if len(ts.writer.decided) != before {
		t.Error("a refused confirmation reached the writer")
	}
}

// A CSR's page reads the storm index: it lists the CSRs once, then reads the
// changes the cache reports by name, and says how many duplicates there are.
func TestCSRDetailReadsTheStormIndex(t *testing.T) {
	cl := newStormCluster(t, 5)
	ts := newCSRTestServer(t, cl, signerAccess{signers: map[string]bool{apiClientSigner: true}}, false)
	sess := ts.login(t)
	for range 3 {
		rec, doc := ts.request(t, sess, http.MethodGet, "/csrs/storm-1", nil, false)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d", rec.Code)
		}
		f := doc.Find(`[data-check="duplicate"]`)
		if !strings.Contains(f.Text(), "4 other pending requests for this signer and subject") || f.Find(`a[href^="/csrs?group=d-"]`).Length() != 1 {
			t.Fatalf("duplicate finding %q", f.Text())
		}
	}
	if n := cl.lists.Load(); n != 1 {
		t.Errorf("three views listed the CSRs %d times, want once", n)
	}
	// A change is read by its name (the index follows the cache's reports
	// since issue 27): the new request counts, and nothing is listed again.
	c := fakeCSR(t, "storm-9", apiClientSigner, "kubelet-w", time.Now())
	c.Spec.Request = cl.order[0].Spec.Request
	cl.order, cl.items["storm-9"] = append(cl.order, c), c
	cl.changed("storm-9")
	_, doc := ts.request(t, sess, http.MethodGet, "/csrs/storm-1", nil, false)
	if f := doc.Find(`[data-check="duplicate"]`).Text(); !strings.Contains(f, "5 other pending requests") {
		t.Errorf("after a new request of the storm: %q", f)
	}
	if n := cl.lists.Load(); n != 1 {
		t.Errorf("a change was read by listing every CSR: %d lists", n)
	}
}
