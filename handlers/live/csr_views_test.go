package live

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/handlers/internal/livetest"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
)

// A view names exactly what the queue page writes for it; anything a page
// does not offer is refused, so only views a person can open are kept.
func TestCSRViewOf(t *testing.T) {
	for _, s := range []string{"", "state=pending", "dir=desc&sort=age&state=pending", "page=2&sort=signer", "q=node&requester=system%3Anode%3Aw1&signer=kubernetes.io%2Fkubelet-serving", "selector=app%3Dx",
		"policy=node-client&state=pending&verdict=approve", "verdict=deny"} {
		if _, _, ok := csrViewOf(s); !ok {
			t.Errorf("csrViewOf(%q) refused a view the page offers", s)
		}
	}
	for _, s := range []string{"sort=secret", "state=everything", "state=pending&state=denied", "q=+x", "page=1", "page=-3",
		"sort=age&dir=desc&state=pending", "selector=a+in+%28", "other=1", "group=s-nothex", "%zz",
		"policy=Bad_Name", "verdict=maybe", "verdict=approve&policy=x"} {
		if _, _, ok := csrViewOf(s); ok {
			t.Errorf("csrViewOf(%q) took a view the page never asks for", s)
		}
	}
}

// queueCluster is a live cluster of n pending requests created a minute
// apart, csr-000 the oldest, each from a requester of its own (no storms).
func queueCluster(t testing.TB, n int) *livetest.Cluster {
	cl := livetest.NewCluster()
	now := time.Now()
	for i := range n {
		name := fmt.Sprintf("csr-%03d", i)
		cl.Requests[name] = fakeCSR(t, name, apiClientSigner, fmt.Sprintf("user-%d", i), now.Add(-time.Duration(n-i)*time.Minute))
		cl.Requests[name].ResourceVersion = "1"
	}
	return cl
}

// viewHTML is a view's update as the tabs read it (inflated).
func viewHTML(t *testing.T, m live.Message) []byte {
	t.Helper()
	html, err := page.InflateCSRView(m.Data)
	if err != nil {
		t.Fatalf("a view's update %.60q: %v", m.Data, err)
	}
	return html
}

// viewOps reads a view's update: its ops as "op key after", the rows it carries.
func viewOps(t *testing.T, m live.Message) ([]string, *goquery.Document) {
	t.Helper()
	d := doc(t, viewHTML(t, m))
	var ops []string
	d.Find(`[data-csr-view-ops] li`).Each(func(_ int, li *goquery.Selection) {
		ops = append(ops, strings.TrimSpace(li.AttrOr("data-op", "")+" "+li.AttrOr("data-key", "")+" "+li.AttrOr("data-after", "")))
	})
	return ops, d
}

// pageKeys is the row keys of a view's page as the server holds it.
func pageKeys(lv *Updates, view string) []string {
	var keys []string
	for _, r := range lv.csrViews[view].rows {
		keys = append(keys, r.Key)
	}
	return keys
}

// A tab's stream compares the rows its page shows (page.CSRViewState, sent
// as shows=) with the view's rows its ops will start from: a view computed
// from a cache that took a change after the page, before any batch said so,
// differs, and the events handler resyncs that tab.
func TestOpenCSRViewComparesTheTabsPage(t *testing.T) {
	cl := queueCluster(t, 5)
	lv := newUpdates(cl)
	const view = "sort=age&state=pending"
	q, sel, ok := csrViewOf(view)
	if !ok {
		t.Fatal("view refused")
	}
	_, release, current, ok := lv.openCSRView(view, q, sel, false, "")
	if !ok || !current {
		t.Fatalf("a tab that says nothing of its page: ok %v, current %v", ok, current)
	}
	shows := page.CSRViewState(lv.csrViews[view].rows) // what a page rendered now shows
	_, release2, current, _ := lv.openCSRView(view, q, sel, false, shows)
	if !current {
		t.Error("a tab showing the open view's rows is told they differ")
	}
	release()
	release2()
	if len(lv.csrViews) != 0 {
		t.Fatal("the view outlived its tabs")
	}

	// The cache takes a new request, no batch rendered yet; a tab whose page
	// was rendered before it opens the view.
	cl.Requests["csr-new"] = fakeCSR(t, "csr-new", apiClientSigner, "user-new", time.Now())
	_, release, current, _ = lv.openCSRView(view, q, sel, false, shows)
	defer release()
	if current {
		t.Error("a view holding a request the tab's page lacks is said to be what the page shows")
	}
}

// The tabs of one view get, per batch, the ops of that view once: a new
// request at its place, rows that leave, the counts only when they changed;
// no message when the batch does not touch the view.
func TestLiveCSRViewOps(t *testing.T) {
	cl := queueCluster(t, 5)
	lv := newUpdates(cl)
	const view = "sort=age&state=pending" // youngest first
	q, sel, ok := csrViewOf(view)
	if !ok {
		t.Fatal("view refused")
	}
	topic, release, _, ok := lv.openCSRView(view, q, sel, false, "")
	if !ok {
		t.Fatal("view not opened")
	}
	// Another tab of the same view shares it.
	topic2, release2, _, _ := lv.openCSRView(view, q, sel, false, "")
	if topic2 != topic || len(lv.csrViews) != 1 {
		t.Fatalf("two tabs of one view: topics %s and %s, %d views", topic, topic2, len(lv.csrViews))
	}

	// A new request: the newest, first on the page.
	cl.Requests["csr-new"] = fakeCSR(t, "csr-new", apiClientSigner, "user-new", time.Now())
	msgs := lv.Render(kube.CSRs, []string{"csr-new"}, false)
	m, ok := byEvent(msgs)[CSRViewEvent]
	if !ok || m.Topic != topic {
		t.Fatalf("no view update on %s in %+v", topic, msgs)
	}
	if _, ok := byEvent(msgs)["csrs-rows"]; !ok {
		t.Error("the unfiltered queue's rows (streams beyond the bound, detail pages) are no longer sent")
	}
	ops, d := viewOps(t, m)
	if !slices.Equal(ops, []string{"insert row-csrs-csr-new"}) {
		t.Errorf("ops %v, want the new request inserted first", ops)
	}
	if d.Find(`tr#row-csrs-csr-new [data-testid="row-select"]`).Length() != 1 || d.Find(`[data-csr-view-ops] li[data-signer="`+apiClientSigner+`"]`).Length() != 1 {
		t.Errorf("the new row must carry its selection box and its signer (the page keeps it by its user's rights): %s", viewHTML(t, m))
	}
	if d.Find(`tr[id]`).Length() != 1 {
		t.Errorf("rows other than the new one sent: %s", viewHTML(t, m))
	}
	if got := d.Find(`[data-csr-view-counts] [data-tab="pending"]`).Text(); got != "6" {
		t.Errorf("pending count %q, want 6: %s", got, viewHTML(t, m))
	}
	if got := d.Find(`[data-csr-view-ops]`).AttrOr("data-hash", ""); got != CSRPageHash(lv.csrViews[view].rows) || got == "" {
		t.Errorf("hash %q, want the page's", got)
	}

	// The oldest is approved: it leaves the pending tab.
	cl.Requests["csr-000"] = fakeCSR(t, "csr-000", apiClientSigner, "user-0", time.Now().Add(-5*time.Minute), certificatesv1.CertificateApproved)
	ops, _ = viewOps(t, byEvent(lv.Render(kube.CSRs, []string{"csr-000"}, false))[CSRViewEvent])
	if !slices.Equal(ops, []string{"remove row-csrs-csr-000"}) {
		t.Errorf("ops %v, want the approved request removed", ops)
	}

	// A change the view does not show: no update for it.
	cl.Requests["csr-000"].ResourceVersion = "9"
	if m, ok := byEvent(lv.Render(kube.CSRs, []string{"csr-000"}, false))[CSRViewEvent]; ok {
		t.Errorf("an update for a change the view does not show: %s", m.Data)
	}

	release()
	release2()
	if len(lv.csrViews) != 0 {
		t.Errorf("the view outlived its last tab")
	}
}

// A paged view: a request decided on page 1 brings the first row of page 2
// up, and page 2 takes the first row of page 3 at its end.
func TestLiveCSRViewPaged(t *testing.T) {
	cl := queueCluster(t, 2*100+3) // page size 100: three pages
	lv := newUpdates(cl)
	const view = "dir=desc&page=2&sort=age&state=pending" // oldest first
	q, sel, _ := csrViewOf(view)
	if _, _, _, ok := lv.openCSRView(view, q, sel, false, ""); !ok {
		t.Fatal("view not opened")
	}
	before := pageKeys(lv, view)
	if len(before) != 100 || before[0] != "row-csrs-csr-100" {
		t.Fatalf("page 2 starts with %v (%d rows)", before[:1], len(before))
	}
	cl.Requests["csr-005"] = fakeCSR(t, "csr-005", apiClientSigner, "user-5", time.Now().Add(-time.Hour), certificatesv1.CertificateApproved)
	ops, d := viewOps(t, byEvent(lv.Render(kube.CSRs, []string{"csr-005"}, false))[CSRViewEvent])
	want := []string{"remove row-csrs-csr-100", "insert row-csrs-csr-200 row-csrs-csr-199"}
	if !slices.Equal(ops, want) {
		t.Errorf("ops %v, want %v", ops, want)
	}
	if d.Find(`tr#row-csrs-csr-200`).Length() != 1 {
		t.Errorf("the row entering the page is not carried")
	}
	if got := pageKeys(lv, view); got[0] != "row-csrs-csr-101" || got[99] != "row-csrs-csr-200" {
		t.Errorf("page 2 now %s…%s", got[0], got[99])
	}
}

// Requests of one requester and subject become one storm row; when the
// storm falls apart, its last request is a row of its own again.
func TestLiveCSRViewStorm(t *testing.T) {
	cl := queueCluster(t, 2)
	for _, n := range []string{"storm-a", "storm-b"} {
		cl.Requests[n] = fakeCSR(t, n, apiClientSigner, "retrying", time.Now().Add(-time.Second))
	}
	lv := newUpdates(cl)
	const view = "state=pending"
	q, sel, _ := csrViewOf(view)
	lv.openCSRView(view, q, sel, false, "")
	group := ""
	for _, k := range pageKeys(lv, view) {
		if strings.HasPrefix(k, "row-csrs-group-") {
			group = k
		}
	}
	if group == "" {
		t.Fatalf("no storm row on %v", pageKeys(lv, view))
	}
	// It grows: one op, its row with the new count.
	cl.Requests["storm-c"] = fakeCSR(t, "storm-c", apiClientSigner, "retrying", time.Now())
	ops, d := viewOps(t, byEvent(lv.Render(kube.CSRs, []string{"storm-c"}, false))[CSRViewEvent])
	if !slices.Equal(ops, []string{"replace " + group}) || d.Find(`[data-testid="group-count"]`).Text() != "3" {
		t.Errorf("storm grew: ops %v, count %q", ops, d.Find(`[data-testid="group-count"]`).Text())
	}
	// It falls apart: its row goes, its last request comes.
	delete(cl.Requests, "storm-a")
	delete(cl.Requests, "storm-b")
	ops, _ = viewOps(t, byEvent(lv.Render(kube.CSRs, []string{"storm-a", "storm-b"}, false))[CSRViewEvent])
	if len(ops) != 2 || ops[0] != "remove "+group || !strings.HasPrefix(ops[1], "insert row-csrs-storm-c") {
		t.Errorf("storm fell apart: ops %v", ops)
	}
}

// Beyond maxCSRViews distinct views a tab gets no view of its own (the
// events handler then subscribes it to the unfiltered queue's rows).
func TestLiveCSRViewBound(t *testing.T) {
	lv := newUpdates(queueCluster(t, 1))
	for i := range maxCSRViews {
		view := fmt.Sprintf("q=x%d", i)
		q, sel, _ := csrViewOf(view)
		if _, _, _, ok := lv.openCSRView(view, q, sel, false, ""); !ok {
			t.Fatalf("view %d refused", i)
		}
	}
	q, sel, _ := csrViewOf("q=one-more")
	if _, _, _, ok := lv.openCSRView("q=one-more", q, sel, false, ""); ok {
		t.Error("a view beyond the bound was opened")
	}
	// An open view is joined whatever the bound.
	q, sel, _ = csrViewOf("q=x3")
	if _, _, _, ok := lv.openCSRView("q=x3", q, sel, false, ""); !ok {
		t.Error("a tab of an open view was refused")
	}
}

// staticPolicies is a csrpolicy.Source that never changes.
type staticPolicies []*unstructured.Unstructured

func (s staticPolicies) List() ([]*unstructured.Unstructured, uint64, error) { return s, 1, nil }
func (s staticPolicies) Generation() uint64                                  { return 1 }

// The approval policies' verdicts are shown only to users who may list the
// policies: their tabs and the tabs of users who may not never share a view,
// and the rows sent to the latter carry no verdict. (A shared view once sent
// the verdicts to every tab that may list CSRs.)
func TestLiveCSRViewsSendVerdictsOnlyToThoseWhoMayListPolicies(t *testing.T) {
	cl := queueCluster(t, 2)
	lv := newUpdates(cl)
	lv.csrQueue.UsePolicies(csrpolicy.NewSet(staticPolicies{{Object: map[string]any{
		"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy", "metadata": map[string]any{"name": "everyone"},
		"spec": map[string]any{"signerNames": []any{apiClientSigner}, "expression": "true", "decision": "Approve",
			"reason": "PolicyApprove", "message": "approved by policy"},
	}}}))
	const view = "sort=age&state=pending"
	q, sel, _ := csrViewOf(view)
	withTopic, release, _, _ := lv.openCSRView(view, q, sel, true, "")
	defer release()
	withoutTopic, release2, _, _ := lv.openCSRView(view, q, sel, false, "")
	defer release2()
	if withTopic == withoutTopic || len(lv.csrViews) != 2 {
		t.Fatalf("one view with and without verdicts: topics %s, %s; %d views", withTopic, withoutTopic, len(lv.csrViews))
	}
	cl.Requests["csr-new"] = fakeCSR(t, "csr-new", apiClientSigner, "user-new", time.Now())
	chips := map[string]int{}
	for _, m := range lv.Render(kube.CSRs, []string{"csr-new"}, false) {
		if m.Event == CSRViewEvent {
			_, d := viewOps(t, m)
			chips[m.Topic] = d.Find(`[data-testid="verdict-chip"]`).Length()
		}
	}
	if chips[withTopic] == 0 {
		t.Errorf("the view of users who may list the policies shows no verdict: %v", chips)
	}
	if n, ok := chips[withoutTopic]; !ok || n != 0 {
		t.Errorf("the view of users who may not list the policies: %d verdicts (sent: %v)", n, ok)
	}
}

// changingPolicies is a csrpolicy.Source whose one policy a test changes.
type changingPolicies struct {
	gen    uint64
	policy *unstructured.Unstructured
}

func (s *changingPolicies) List() ([]*unstructured.Unstructured, uint64, error) {
	return []*unstructured.Unstructured{s.policy}, s.gen, nil
}
func (s *changingPolicies) Generation() uint64 { return s.gen }

func everyonePolicy(decision string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy", "metadata": map[string]any{"name": "everyone"},
		"spec": map[string]any{"signerNames": []any{apiClientSigner}, "expression": "true", "decision": decision,
			"reason": "Policy" + decision, "message": "by policy"},
	}}
}

// A policy change reaches the open views that show verdicts without any CSR
// changing: each such view once, however many tabs show it, its rows
// replaced with the new verdicts; a view without verdicts gets nothing.
func TestLiveCSRViewsFollowPolicyChanges(t *testing.T) {
	cl := queueCluster(t, 2)
	lv := newUpdates(cl)
	src := &changingPolicies{gen: 1, policy: everyonePolicy("Approve")}
	lv.csrQueue.UsePolicies(csrpolicy.NewSet(src))
	open := func(view string, verdicts bool) string {
		q, sel, _ := csrViewOf(view)
		topic, release, _, ok := lv.openCSRView(view, q, sel, verdicts, "")
		if !ok {
			t.Fatalf("view %s not opened", view)
		}
		t.Cleanup(release)
		return topic
	}
	pending := open("sort=age&state=pending", true)
	open("sort=age&state=pending", true) // a second tab of the same view
	all := open("sort=age&state=all", true)
	without := open("sort=age&state=pending", false)

	src.gen, src.policy = 2, everyonePolicy("Deny")
	sent := map[string]int{}
	for _, m := range lv.Render(kube.CSRApprovalPolicies, []string{"everyone"}, false) {
		if m.Event != CSRViewEvent {
			continue
		}
		sent[m.Topic]++
		ops, d := viewOps(t, m)
		if len(ops) != 2 || !strings.HasPrefix(ops[0], "replace ") || !strings.Contains(d.Text(), "deny") && !strings.Contains(d.Text(), "Deny") {
			t.Errorf("%s: ops %v, want both rows replaced with the deny verdict", m.Topic, ops)
		}
	}
	if sent[pending] != 1 || sent[all] != 1 || sent[without] != 0 || len(sent) != 2 {
		t.Errorf("messages per view: %v; want one for each view with verdicts, none without", sent)
	}
}
