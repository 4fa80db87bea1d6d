package present

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// stormFixture is the queue fixture with a storm of n pending requests from
// "kubelet-w", storm-0 the oldest, created after every fixture request.
func stormFixture(t testing.TB, now time.Time, n int) []*certificatesv1.CertificateSigningRequest {
	items := queueFixture(t, now)
	body := testfixtures.SubjectPEM(t, "kubelet-w")
	for i := range n {
		c := qcsr(t, fmt.Sprintf("storm-%d", i), apiClient, "kubelet-w", "", now.Add(time.Duration(i-n)*time.Second), CSRPending, time.Time{})
		c.Spec.Request = body
		items = append(items, c)
	}
	return items
}

func TestCSRQueueStormIsOneRow(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	items := stormFixture(t, now, 40)
	all := runQueue(items, CSRQueueQuery{}, queueEnv{Now: now, MayDecide: func(string) bool { return true }})
	var groups []int
	for i, r := range all.Rows {
		if r.Group != nil {
			groups = append(groups, i)
		} else if strings.HasPrefix(r.Name, "storm-") {
			t.Errorf("%s has a row of its own", r.Name)
		}
	}
	if len(groups) != 1 {
		t.Fatalf("one group row, got %d", len(groups))
	}
	g := all.Rows[groups[0]]
	if g.Group.Count != 40 || g.Group.NewestName != "storm-39" || g.Group.OldestName != "storm-0" || g.Group.Requester != "kubelet-w" ||
		g.Selectable || g.Group.ApproveHref == "" || g.Group.ChecksOf != "storm-39" {
		t.Errorf("group row %+v", *g.Group)
	}
	// The checks once: the duplicates finding is the group's count, not repeated.
	for _, f := range g.Findings {
		if f.Check == "duplicate" {
			t.Errorf("the group row repeats the duplicates finding: %s", f.Message)
		}
	}
	// The fixture's rows plus one: a group counts as one row; Matched and the
	// tabs count requests.
	plain := runQueue(queueFixture(t, now), CSRQueueQuery{}, queueEnv{Now: now})
	if len(all.Rows) != len(plain.Rows)+1 || all.Matched != plain.Matched+40 || tabCounts(all)[1] != tabCounts(plain)[1]+40 {
		t.Errorf("rows %d (want %d), matched %d (want %d), pending tab %v", len(all.Rows), len(plain.Rows)+1, all.Matched, plain.Matched+40, tabCounts(all))
	}
	// Paged: the group is one row of a page of 2.
	paged := runQueue(items, CSRQueueQuery{}, queueEnv{Now: now, PageSize: 2})
	if paged.Pager.Pages != (len(plain.Rows)+1+1)/2 {
		t.Errorf("pages %d for %d rows", paged.Pager.Pages, len(plain.Rows)+1)
	}

	// The group's view shows its requests one by one, oldest first, each
	// saying how many others there are, with the link, without their names.
	view := runQueue(items, CSRQueueQuery{Group: g.Group.ID}, queueEnv{Now: now, MayDecide: func(string) bool { return true }})
	if len(view.Rows) != 40 || view.Rows[0].Name != "storm-0" || view.Group == nil || !view.Rows[0].Selectable {
		t.Fatalf("group view: %d rows, first %s", len(view.Rows), view.Rows[0].Name)
	}
	var dup *struct{ msg, href string }
	for _, f := range view.Rows[0].Findings {
		if f.Check == "duplicate" {
			dup = &struct{ msg, href string }{f.Message, f.Href}
		}
	}
	if dup == nil || !strings.Contains(dup.msg, "39 other pending requests for this signer and subject") || strings.Contains(dup.msg, "storm-1") ||
		!strings.HasPrefix(dup.href, "/csrs?group=d-") {
		t.Errorf("row text %+v", dup)
	}
	// The duplicates link selects the same requests here (one requester).
	dv := runQueue(items, csrqueue.ParseQuery(mustQuery(t, dup.href)), queueEnv{Now: now})
	if len(dv.Rows) != 40 {
		t.Errorf("the duplicates link shows %d rows", len(dv.Rows))
	}
	// The text filter finds a storm by its finding's words, as one row.
	if p := runQueue(items, CSRQueueQuery{Filter: "39 other pending"}, queueEnv{Now: now}); len(p.Rows) != 1 || p.Rows[0].Group == nil {
		t.Errorf("filter on the duplicates text: %v", names(p))
	}
	if q := csrqueue.ParseQuery(mustQuery(t, "/csrs?group=../../x")); q.Group != "" {
		t.Errorf("a malformed group is dropped: %q", q.Group)
	}
}

func mustQuery(t testing.TB, href string) map[string][]string {
	t.Helper()
	_, q, _ := strings.Cut(href, "?")
	v := map[string][]string{}
	for _, kv := range strings.Split(q, "&") {
		k, val, _ := strings.Cut(kv, "=")
		v[k] = append(v[k], val)
	}
	return v
}

// A step of a storm larger than the limit says what it leaves (the plan
// itself: csrqueue's TestPlanStorm).
func TestCSRGroupPreviewPageOfALargeStorm(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	st := csrqueue.StormsOf(stormFixture(t, now, 5), csrqueue.Checks{}).Of("storm-0")
	pv, _ := CSRGroupPreviewPage(st, csrqueue.StormApproveNewest, 2, now)
	if pv.Left != 3 || pv.Approve != 0 || !strings.Contains(pv.Note, "Run this action again") {
		t.Errorf("a step of a large storm says what is left: %+v", pv.Note)
	}
}

// A live update of a growing storm is its one group row, not its requests.
func TestCSRQueueLiveStorm(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	cache := &csrqueue.Cache{}
	env := queueEnv{Now: now, Cache: cache}
	items := stormFixture(t, now, 30)
	runQueue(items, CSRQueueQuery{}, env)
	grown := stormFixture(t, now, 32)[len(items)-30:] // storm-0..31
	items = append(items[:len(items)-30], grown...)
	u := runQueueLive(items, []string{"storm-30", "storm-31"}, env)
	if len(u.Rows) != 1 || u.Rows[0].Group == nil || u.Rows[0].Group.Count != 32 || len(u.Removed) != 0 {
		t.Fatalf("one group row of 32: %d rows, removed %v", len(u.Rows), u.Removed)
	}
	// All but one decided: the group row goes, the last request is a row again.
	var shrunk []*certificatesv1.CertificateSigningRequest
	var gone []string
	for _, c := range items {
		if strings.HasPrefix(c.Name, "storm-") && c.Name != "storm-31" {
			gone = append(gone, c.Name)
			continue
		}
		shrunk = append(shrunk, c)
	}
	u = runQueueLive(shrunk, gone, env)
	var rows []string
	for _, r := range u.Rows {
		rows = append(rows, r.Name)
	}
	if !slices.Contains(u.Removed, "row-csrs-group-"+grownID(t, grown)) || !slices.Equal(rows, []string{"storm-31"}) {
		t.Errorf("rows %v, removed %d", rows, len(u.Removed))
	}
}

func grownID(t testing.TB, items []*certificatesv1.CertificateSigningRequest) string {
	st := csrqueue.StormsOf(items, csrqueue.Checks{}).Of(items[0].Name)
	if st == nil {
		t.Fatal("no storm")
	}
	return st.ID
}

// TestCSRQueueStormShape runs the benchmark's shape once in go test: 5,000
// storm requests beside 45,000 decided ones make one group row, and the
// rendered first page stays small (it was 6.8 MB when every row listed its
// duplicates' names).
func TestCSRQueueStormShape(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	items := stormShape(t, now, 5_000, 45_000)
	p := runQueue(items, CSRQueueQuery{}, queueEnv{Now: now, MayDecide: func(string) bool { return true }, Cache: &csrqueue.Cache{}})
	if p.Rows[0].Group == nil || p.Rows[0].Group.Count != 5_000 {
		t.Fatalf("first row: %+v", p.Rows[0].Row)
	}
	var buf bytes.Buffer
	if err := pages.CSRQueueTable(p).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 512<<10 {
		t.Errorf("first page of 100 rows is %d bytes", buf.Len())
	}
}
