package present

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func TestPaginate(t *testing.T) {
	href := func(n int) string { return fmt.Sprint(n) }
	links := func(p model.Pager) string {
		s := ""
		for _, l := range p.Links {
			switch {
			case l.Gap:
				s += "… "
			case l.Current:
				s += "[" + l.Href + "] "
			default:
				s += l.Href + " "
			}
		}
		return s
	}
	for _, tc := range []struct {
		page, size, matched int
		lo, hi              int
		want                model.Pager
		links               string
	}{
		{0, 100, 0, 0, 0, model.Pager{Page: 1, Pages: 1}, ""},
		{3, 100, 0, 0, 0, model.Pager{Page: 1, Pages: 1}, ""},
		{1, 100, 100, 0, 100, model.Pager{Page: 1, Pages: 1, From: 1, To: 100, Matched: 100}, ""},
		{1, 100, 101, 0, 100, model.Pager{Page: 1, Pages: 2, From: 1, To: 100, Matched: 101, Next: "2"}, "[1] 2 "},
		{2, 100, 101, 100, 101, model.Pager{Page: 2, Pages: 2, From: 101, To: 101, Matched: 101, Prev: "1"}, "1 [2] "},
		{99, 100, 101, 100, 101, model.Pager{Page: 2, Pages: 2, From: 101, To: 101, Matched: 101, Prev: "1"}, "1 [2] "},
		{250, 100, 50_000, 24_900, 25_000, model.Pager{Page: 250, Pages: 500, From: 24_901, To: 25_000, Matched: 50_000, Prev: "249", Next: "251"},
			"1 … 248 249 [250] 251 252 … 500 "},
		{4, 10, 95, 30, 40, model.Pager{Page: 4, Pages: 10, From: 31, To: 40, Matched: 95, Prev: "3", Next: "5"}, "1 2 3 [4] 5 6 … 10 "},
	} {
		lo, hi, p := paginate(tc.page, tc.size, tc.matched, href)
		got := links(p)
		p.Links = nil
		if lo != tc.lo || hi != tc.hi || !reflect.DeepEqual(p, tc.want) || got != tc.links {
			t.Errorf("paginate(%d, %d, %d) = [%d,%d) %+v %q, want [%d,%d) %+v %q", tc.page, tc.size, tc.matched, lo, hi, p, got, tc.lo, tc.hi, tc.want, tc.links)
		}
	}
}

// TestListPages: the generic lists filter and sort every object, then show one
// page; the links keep filter and sort, and the count is over every page.
func TestListPages(t *testing.T) {
	cols := []column{{"name", "Name", true}, {"n", "N", true}}
	var rows []row
	for i := range 250 {
		name := fmt.Sprintf("obj-%03d", i)
		rows = append(rows, newRow("things", "/things", name, []model.Cell{{Text: fmt.Sprint(i % 7)}}, []string{fmt.Sprint(i % 7)}))
	}
	p := table("things", "Things", "/things", cols, rows, ListQuery{})
	if len(p.Rows) != PageSize || p.Shown != 250 || p.Total != 250 || p.Pager.Pages != 3 || p.Rows[0].Name != "obj-000" || p.View != "/things" {
		t.Fatalf("page 1: %d rows, shown %d, %+v, view %q", len(p.Rows), p.Shown, p.Pager, p.View)
	}
	last := table("things", "Things", "/things", cols, rows, ListQuery{Page: 3})
	if len(last.Rows) != 50 || last.Rows[0].Name != "obj-200" || last.View != "/things?page=3" {
		t.Errorf("page 3: %d rows from %s, view %q", len(last.Rows), last.Rows[0].Name, last.View)
	}
	q := ListQuery{Filter: "obj-1", Sort: "n", Desc: true, Page: 2}
	f := table("things", "Things", "/things", cols, rows, q)
	if f.Shown != 100 || f.Pager.Pages != 1 || f.Pager.Page != 1 || len(f.Rows) != 100 {
		t.Errorf("filtered to 100: shown %d, %+v", f.Shown, f.Pager)
	}
	q.Filter = "obj-"
	f = table("things", "Things", "/things", cols, rows, q)
	var want []string
	for _, r := range table("things", "Things", "/things", cols, rows, ListQuery{Filter: "obj-", Sort: "n", Desc: true, Page: 1}).Rows {
		want = append(want, r.Name)
	}
	var got []string
	for _, r := range f.Rows {
		got = append(got, r.Name)
	}
	if slices.Equal(got, want) || len(got) != 100 {
		t.Errorf("page 2 differs from page 1: %v", got[:3])
	}
	u, err := url.Parse(f.Pager.Prev)
	if err != nil || u.Query().Get("q") != "obj-" || u.Query().Get("sort") != "n" || u.Query().Get("dir") != "desc" || u.Query().Has("page") {
		t.Errorf("previous page link %q", f.Pager.Prev)
	}
	for _, c := range f.Columns {
		if u, _ := url.Parse(c.SortHref); u.Query().Has("page") {
			t.Errorf("sort link %q keeps the page", c.SortHref)
		}
	}
}

// BenchmarkCSRQueue50k measures the queue over 50,000 CSRs (a third pending,
// the rest decided), the first page, a filtered page and a deep page, with the
// process-wide decode memo and queue cache as the handler uses them.
func BenchmarkCSRQueue50k(b *testing.B) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	states := []string{CSRPending, CSRIssued, CSRDenied}
	items := make([]*certificatesv1.CertificateSigningRequest, 50_000)
	for i := range items {
		items[i] = qcsr(b, fmt.Sprintf("csr-%05d", i), apiClient, fmt.Sprintf("user-%03d", i%300), fmt.Sprintf("cn-%05d", i),
			now.Add(-time.Duration(i)*time.Minute), states[i%3], now.Add(-time.Duration(i)*time.Second))
	}
	memo := csr.NewMemo(200_000)
	env := queueEnv{Now: now, Checks: csrqueue.Checks{Decode: memo.Decode}, MayDecide: func(string) bool { return true }, Cache: &csrqueue.Cache{}}
	for _, bc := range []struct {
		name string
		q    CSRQueueQuery
	}{
		{"first", CSRQueueQuery{}},
		{"filtered", CSRQueueQuery{Filter: "cn-4", State: CSRPending}},
		{"deep", CSRQueueQuery{Page: 400}},
		{"sorted-by-checks", CSRQueueQuery{Sort: "checks", Page: 200}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			runQueue(items, bc.q, env) // fills the memo, as the first view does
			for b.Loop() {
				if p := runQueue(items, bc.q, env); len(p.Rows) == 0 {
					b.Fatal("no rows")
				}
			}
		})
	}
}

// TestCSRQueueCache: the queue's per-CSR cache gives the same page as no
// cache, follows a changed object (a new version is a new pointer) and a
// duplicate that appears, and drops the entries of objects gone.
func TestCSRQueueCache(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	items := queueFixture(t, now)
	cache := &csrqueue.Cache{}
	for _, q := range []CSRQueueQuery{{}, {Filter: "danger"}, {Filter: "mallory"}, {Sort: "checks"}, {State: CSRPending}} {
		want := runQueue(items, q, queueEnv{Now: now})
		got := runQueue(items, q, queueEnv{Now: now, Cache: cache})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: with the cache %v, without %v", q, names(got), names(want))
		}
	}
	// pending-young is approved: its new version shows as approved.
	changed := slices.Clone(items)
	for i, c := range changed {
		if c.Name == "pending-young" {
			changed[i] = qcsr(t, "pending-young", apiClient, "bob", "bob", now.Add(-time.Hour), CSRApproved, now)
		}
	}
	p := runQueue(changed, CSRQueueQuery{State: CSRApproved}, queueEnv{Now: now, Cache: cache})
	if !slices.Contains(names(p), "pending-young") {
		t.Errorf("a new version is seen: approved tab %v", names(p))
	}
	// A second pending request for mallory's subject makes both duplicates.
	dup := qcsr(t, "masters-again", apiClient, "mallory", "mallory", now.Add(-2*time.Hour), CSRPending, time.Time{}, "system:masters")
	withDup := append(slices.Clone(items), dup)
	p = runQueue(withDup, CSRQueueQuery{Filter: "masters-again"}, queueEnv{Now: now, Cache: cache})
	q := runQueue(withDup, CSRQueueQuery{Filter: "masters-again"}, queueEnv{Now: now})
	// The duplicate finding counts the other request rather than naming it,
	// so only masters-again matches; with masters it is one storm, one row.
	if !reflect.DeepEqual(p, q) || p.Matched != 1 || len(p.Rows) != 1 || p.Rows[0].Group == nil || p.Rows[0].Group.Count != 2 {
		t.Errorf("the duplicate is one storm row with the cache and without: %v vs %v", names(p), names(q))
	}
	// Many views over a shrinking set keep the cache bounded.
	for range 3 {
		runQueue(items[:1], CSRQueueQuery{}, queueEnv{Now: now, Cache: cache})
	}
	if n := cache.Len(); n > 2*1+64 {
		t.Errorf("the cache holds %d entries for 1 CSR", n)
	}
}
