package present

import (
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// qcsr builds a CSR for the queue tests: state is one of the state keys,
// decided is when it was approved or denied.
func qcsr(t testing.TB, name, signer, user, cn string, created time.Time, state string, decided time.Time, orgs ...string) *certificatesv1.CertificateSigningRequest {
	c := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(created)},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: signer, Username: user, Groups: []string{"system:authenticated", "team-" + user},
			Request: testfixtures.SubjectPEM(t, cn, orgs...),
			Usages:  []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	cond := func(ty certificatesv1.RequestConditionType) {
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: ty, Status: corev1.ConditionTrue, LastUpdateTime: metav1.NewTime(decided)})
	}
	switch state {
	case CSRApproved:
		cond(certificatesv1.CertificateApproved)
	case CSRIssued:
		cond(certificatesv1.CertificateApproved)
		c.Status.Certificate = []byte("cert")
	case CSRDenied:
		cond(certificatesv1.CertificateDenied)
	case CSRFailed:
		cond(certificatesv1.CertificateApproved)
		cond(certificatesv1.CertificateFailed)
	}
	return c
}

const apiClient = certificatesv1.KubeAPIServerClientSignerName

func queueFixture(t testing.TB, now time.Time) []*certificatesv1.CertificateSigningRequest {
	h := func(n int) time.Time { return now.Add(-time.Duration(n) * time.Hour) }
	return []*certificatesv1.CertificateSigningRequest{
		qcsr(t, "issued-old", apiClient, "ann", "ann", h(50), CSRIssued, h(49)),
		qcsr(t, "pending-young", apiClient, "bob", "bob", h(1), CSRPending, time.Time{}),
		qcsr(t, "denied-recent", apiClient, "eve", "eve", h(30), CSRDenied, h(2)),
		qcsr(t, "pending-old", "example.com/custom", "admin", "svc", h(48), CSRPending, time.Time{}),
		qcsr(t, "approved-waiting", "example.com/custom", "admin", "gw", h(10), CSRApproved, h(5)),
		qcsr(t, "failed", certificatesv1.KubeAPIServerClientKubeletSignerName, "admin", "worker-3", h(20), CSRFailed, h(19), "system:nodes"),
		qcsr(t, "masters", apiClient, "mallory", "mallory", h(3), CSRPending, time.Time{}, "system:masters"),
	}
}

func names(p model.CSRQueuePage) []string {
	var out []string
	for _, r := range p.Rows {
		out = append(out, r.Name)
	}
	return out
}

func TestCSRQueueOrderAndTabs(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	items := queueFixture(t, now)
	p := runQueue(items, CSRQueueQuery{}, queueEnv{Now: now})

	want := []string{"pending-old", "masters", "pending-young", "approved-waiting", "denied-recent", "failed", "issued-old"}
	if got := names(p); !slices.Equal(got, want) {
		t.Errorf("queue order = %v, want %v", got, want)
	}
	if p.Total != 7 || p.Matched != 7 || p.Shown != 7 {
		t.Errorf("counts total/matched/shown = %d/%d/%d", p.Total, p.Matched, p.Shown)
	}
	counts := map[string]int{}
	for _, tab := range p.Tabs {
		counts[tab.Key] = tab.Count
	}
	if !mapsEqual(counts, map[string]int{"": 7, CSRPending: 3, CSRApproved: 1, CSRIssued: 1, CSRDenied: 1, CSRFailed: 1}) {
		t.Errorf("tab counts = %v", counts)
	}
	if !p.Tabs[0].Active || p.Tabs[0].Href != "/csrs" || p.Tabs[1].Href != "/csrs?state=pending" {
		t.Errorf("tabs = %+v", p.Tabs[:2])
	}
	if p.Columns[0].Key != "queue" || p.Columns[0].Sorted != "asc" || p.Columns[0].SortHref != "/csrs?dir=desc&sort=queue" {
		t.Errorf("the first column sorts in queue order by default: %+v", p.Columns[0])
	}

	rev := runQueue(items, CSRQueueQuery{Sort: "queue", Desc: true}, queueEnv{Now: now})
	r := slices.Clone(want)
	slices.Reverse(r)
	if got := names(rev); !slices.Equal(got, r) {
		t.Errorf("descending queue order = %v, want the exact reverse %v", got, r)
	}

	waiting := p.Rows[3]
	if waiting.State != CSRApproved || waiting.Cells[1].Text != "waiting 5h" || !strings.Contains(waiting.Cells[1].Title, "approved 2026-11-21T07:00:00Z") {
		t.Errorf("approved, not issued shows how long it waited: %+v", waiting.Cells[1])
	}
	for i, col := range p.Columns {
		if c := waiting.Cells[i]; col.Key == "checks" && (c.Text != "" || len(c.Badges) > 0) {
			t.Errorf("the checks cell is rendered from Findings, not Cells: %+v", waiting.Cells[i])
		}
	}
	if len(p.Rows[0].Cells) != len(p.Columns) {
		t.Errorf("%d cells for %d columns", len(p.Rows[0].Cells), len(p.Columns))
	}
	if p.Rows[1].Findings[0].Check != "privileged-group" || p.Rows[1].Findings[0].Tone != model.ToneError {
		t.Errorf("a system:masters request shows the danger first: %+v", p.Rows[1].Findings)
	}
	if p.Rows[0].Subject != "CN=svc · ECDSA P-256" {
		t.Errorf("subject summary = %q", p.Rows[0].Subject)
	}
}

func mapsEqual(a, b map[string]int) bool { return maps.Equal(a, b) }

func TestCSRQueueFilters(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	items := queueFixture(t, now)
	cases := []struct {
		name   string
		q      CSRQueueQuery
		want   []string
		counts map[string]int // tab counts under the other filters
	}{
		{"pending tab", CSRQueueQuery{State: CSRPending}, []string{"pending-old", "masters", "pending-young"}, nil},
		{"approved, not issued", CSRQueueQuery{State: CSRApproved}, []string{"approved-waiting"}, nil},
		{"issued", CSRQueueQuery{State: CSRIssued}, []string{"issued-old"}, nil},
		{"denied", CSRQueueQuery{State: CSRDenied}, []string{"denied-recent"}, nil},
		{"failed", CSRQueueQuery{State: CSRFailed}, []string{"failed"}, nil},
		{"signer", CSRQueueQuery{Signer: "example.com/custom"}, []string{"pending-old", "approved-waiting"},
			map[string]int{"": 2, CSRPending: 1, CSRApproved: 1, CSRIssued: 0, CSRDenied: 0, CSRFailed: 0}},
		{"requester by name", CSRQueueQuery{Requester: "ADM"}, []string{"pending-old", "approved-waiting", "failed"}, nil},
		{"requester by group", CSRQueueQuery{Requester: "team-bob"}, []string{"pending-young"}, nil},
		{"newer than an hour and a bit", CSRQueueQuery{Age: "lt24h"}, []string{"masters", "pending-young", "approved-waiting", "failed"}, nil},
		{"older than a day", CSRQueueQuery{Age: "gt24h"}, []string{"pending-old", "denied-recent", "issued-old"}, nil},
		{"text over findings", CSRQueueQuery{Filter: "system:masters"}, []string{"masters"}, nil},
		{"text over the state", CSRQueueQuery{Filter: "not issued"}, []string{"approved-waiting"}, nil},
		{"filters combine", CSRQueueQuery{State: CSRPending, Signer: apiClient, Requester: "bob"}, []string{"pending-young"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := runQueue(items, tc.q, queueEnv{Now: now})
			if got := names(p); !slices.Equal(got, tc.want) {
				t.Errorf("rows = %v, want %v", got, tc.want)
			}
			if tc.counts != nil {
				got := map[string]int{}
				for _, tab := range p.Tabs {
					got[tab.Key] = tab.Count
				}
				if !mapsEqual(got, tc.counts) {
					t.Errorf("tab counts = %v, want %v", got, tc.counts)
				}
			}
			if p.Total != len(items) || p.Matched != len(tc.want) {
				t.Errorf("total %d matched %d", p.Total, p.Matched)
			}
			// Every link keeps the filters.
			for _, tab := range p.Tabs {
				u, _ := url.Parse(tab.Href)
				if u.Query().Get("signer") != tc.q.Signer || u.Query().Get("requester") != tc.q.Requester || u.Query().Get("age") != tc.q.Age {
					t.Errorf("tab %q href %q drops a filter", tab.Key, tab.Href)
				}
			}
		})
	}
	none := runQueue(items, CSRQueueQuery{Filter: "zzz"}, queueEnv{Now: now})
	if none.Empty == "" || len(none.Rows) != 0 {
		t.Error("no match explains itself")
	}
	if empty := runQueue(nil, CSRQueueQuery{}, queueEnv{Now: now}); !strings.Contains(empty.Empty, "There are no") {
		t.Errorf("empty cluster: %q", empty.Empty)
	}
}

func TestCSRQueueSelection(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	items := queueFixture(t, now)
	onlyAPIClient := func(s string) bool { return s == apiClient }
	// pending-young was selected as another object than the one now under its
	// name (deleted and created again): it is not ticked for the person.
	p := runQueue(items, CSRQueueQuery{}, queueEnv{Now: now, MayDecide: onlyAPIClient,
		Selected: []string{"uid-masters/masters", "uid-pending-old/pending-old", "uid-issued-old/issued-old", "uid-before/pending-young"}})
	selectable := map[string]bool{}
	selected := map[string]bool{}
	for _, r := range p.Rows {
		selectable[r.Name], selected[r.Name] = r.Selectable, r.Selected
		if r.UID != "uid-"+r.Name || r.SelectValue() != "uid-"+r.Name+"/"+r.Name {
			t.Errorf("row %s carries UID %q, selection value %q", r.Name, r.UID, r.SelectValue())
		}
	}
	if selected["pending-young"] {
		t.Error("a row selected under another UID is not pre-selected")
	}
	if !selectable["masters"] || !selectable["pending-young"] || selectable["pending-old"] || selectable["issued-old"] {
		t.Errorf("only pending rows of signers the user may decide are selectable: %v", selectable)
	}
	if !selected["masters"] || selected["pending-old"] || selected["issued-old"] {
		t.Errorf("pre-selection applies only to selectable rows: %v", selected)
	}
	if !p.Decide {
		t.Error("the bulk form is offered when some pending CSR may be decided")
	}
	// The bulk form does not depend on the filters.
	if f := runQueue(items, CSRQueueQuery{State: CSRIssued}, queueEnv{Now: now, MayDecide: onlyAPIClient}); !f.Decide {
		t.Error("the bulk form stays on another tab")
	}
	if ro := runQueue(items, CSRQueueQuery{}, queueEnv{Now: now}); ro.Decide || ro.Rows[0].Selectable {
		t.Error("without MayDecide nothing is selectable")
	}

}

// TestCSRQueuePages: filters, tabs, counts and sort run over every CSR; the
// rows are one page of the queue order, and the pager's links keep the view.
func TestCSRQueuePages(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	items := queueFixture(t, now)
	all := names(runQueue(items, CSRQueueQuery{}, queueEnv{Now: now}))
	if len(all) != 7 {
		t.Fatalf("the fixture has 7 CSRs on one default page: %v", all)
	}
	env := queueEnv{Now: now, PageSize: 2}
	first := runQueue(items, CSRQueueQuery{}, env)
	if first.Shown != 2 || first.Matched != 7 || !slices.Equal(names(first), all[:2]) {
		t.Errorf("page 1 is the head of the queue: shown %d matched %d %v", first.Shown, first.Matched, names(first))
	}
	if p := first.Pager; p.Page != 1 || p.Pages != 4 || p.From != 1 || p.To != 2 || p.Prev != "" || p.Next != "/csrs?page=2" {
		t.Errorf("pager of page 1: %+v", p)
	}
	for page := 2; page <= 4; page++ {
		p := runQueue(items, CSRQueueQuery{Page: page}, env)
		want := all[(page-1)*2 : min(page*2, 7)]
		if !slices.Equal(names(p), want) || p.Pager.Page != page {
			t.Errorf("page %d = %v, want %v", page, names(p), want)
		}
		if !slices.Equal(tabCounts(p), tabCounts(first)) {
			t.Errorf("page %d: the tab counts are the whole queue's: %v vs %v", page, tabCounts(p), tabCounts(first))
		}
	}
	past := runQueue(items, CSRQueueQuery{Page: 40}, env)
	if past.Pager.Page != 4 || !slices.Equal(names(past), all[6:]) || past.Pager.From != 7 || past.Pager.To != 7 {
		t.Errorf("a page past the end opens the last one: %+v %v", past.Pager, names(past))
	}

	// Sorted and filtered, page 2 continues page 1 of the same order, and every
	// link of the pager keeps the filter and the sort.
	q := CSRQueueQuery{Sort: "age", Desc: true, Signer: apiClient}
	one := runQueue(items, q, env)
	q.Page = 2
	two := runQueue(items, q, env)
	q.Page = 0
	whole := runQueue(items, q, queueEnv{Now: now})
	if got := append(names(one), names(two)...); !slices.Equal(got, names(whole)[:len(got)]) {
		t.Errorf("pages 1+2 %v are the head of %v", got, names(whole))
	}
	for _, l := range append(one.Pager.Links, model.PageLink{Href: one.Pager.Next}) {
		if l.Gap {
			continue
		}
		u, err := url.Parse(l.Href)
		if err != nil || u.Path != "/csrs" || u.Query().Get("signer") != apiClient || u.Query().Get("sort") != "age" || u.Query().Get("dir") != "desc" {
			t.Errorf("page link %q loses the view", l.Href)
		}
	}
	if two.View != "/csrs?"+two.Return || !strings.Contains(two.View, "page=2") {
		t.Errorf("view %q and return %q name page 2", two.View, two.Return)
	}
	// Tabs and sort links start again on page 1.
	for _, tab := range two.Tabs {
		if strings.Contains(tab.Href, "page=") {
			t.Errorf("tab link %q keeps the page", tab.Href)
		}
	}
	for _, c := range two.Columns {
		if strings.Contains(c.SortHref, "page=") {
			t.Errorf("sort link %q keeps the page", c.SortHref)
		}
	}
}

func tabCounts(p model.CSRQueuePage) []int {
	var out []int
	for _, t := range p.Tabs {
		out = append(out, t.Count)
	}
	return out
}

func TestCSRQueueSortByChecks(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	p := runQueue(queueFixture(t, now), CSRQueueQuery{Sort: "checks"}, queueEnv{Now: now})
	if p.Rows[0].Name != "masters" {
		t.Errorf("sorting by checks puts the danger first: %v", names(p))
	}
	last := p.Rows[len(p.Rows)-1]
	if len(last.Findings) != 0 {
		t.Errorf("clean rows come last: %s has %v", last.Name, last.Findings)
	}
}

func TestCSRDetailPage(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	dupA := qcsr(t, "dup-a", apiClient, "bob", "bob", now.Add(-time.Hour), CSRPending, time.Time{})
	dupB := qcsr(t, "dup-b", apiClient, "bob", "bob", now.Add(-time.Hour), CSRPending, time.Time{})
	p := CSRDetailPage(dupA, csrqueue.StormsOf([]*certificatesv1.CertificateSigningRequest{dupA, dupB}, csrqueue.Checks{}), csrqueue.Checks{}, now)
	// The finding counts the others and links them; it does not name them.
	if len(p.Findings) != 1 || p.Findings[0].Check != "duplicate" || !strings.Contains(p.Findings[0].Message, "1 other pending request for this signer and subject") ||
		!strings.HasPrefix(p.Findings[0].Href, "/csrs?group=d-") {
		t.Errorf("findings = %+v", p.Findings)
	}
	if p.CertificateHref != "" {
		t.Error("no download before issue")
	}
	issued := qcsr(t, "done", apiClient, "ann", "ann", now.Add(-time.Hour), CSRIssued, now)
	if ip := CSRDetailPage(issued, nil, csrqueue.Checks{}, now); ip.CertificateHref != "/csrs/done/certificate" {
		t.Errorf("download href = %q", ip.CertificateHref)
	}
	bad := csrWith("bad", now, nil)
	if bp := CSRDetailPage(bad, nil, csrqueue.Checks{}, now); bp.ChecksNote == "" || len(bp.Problems) != 1 {
		t.Errorf("an undecodable request says the checks are partial: %+v", bp.ChecksNote)
	}
	if got := CSRCertificateFile(`we"ird/na me`); got != "we_ird_na_me.crt" {
		t.Errorf("file name = %q", got)
	}
}

func TestCSRQueueUndecodablePendingSinksAndIsNotSelectable(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	bad := qcsr(t, "legacy", apiClient, "old", "old", now.Add(-72*time.Hour), CSRPending, time.Time{})
	bad.Spec.Request = []byte("not PEM")
	items := append(queueFixture(t, now), bad)
	p := runQueue(items, CSRQueueQuery{}, queueEnv{Now: now, MayDecide: func(string) bool { return true }})
	want := []string{"pending-old", "masters", "pending-young", "legacy", "approved-waiting"}
	if got := names(p)[:5]; !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
	legacy := p.Rows[3]
	if legacy.Selectable || !legacy.SubjectBad || !strings.Contains(legacy.Subject, "not PEM") {
		t.Errorf("an undecodable request is shown as such and cannot be selected: %+v", legacy)
	}
}
