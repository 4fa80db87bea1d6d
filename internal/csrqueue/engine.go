package csrqueue

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
)

// PageSize is how many rows one page of the queue holds unless the view asks
// for another size (Env.PageSize), as many as a generic list's page.
const PageSize = 100

// Env is what a view of the queue needs besides the CSRs and the query. The
// page that asks for the view gives the time, who may decide, the labels
// and the policies, and lends the presenter's Words; a Queue brings its own
// Checks and Cache (Queue.Run, Queue.Live).
type Env struct {
	Now    time.Time
	Checks Checks
	// Words is the rows' wording the text filter searches (required).
	Words Words
	// MayDecide reports whether the user may approve and deny for a signer;
	// nil means nowhere. The result says whether any pending request is
	// decidable (Result.Decidable).
	MayDecide func(signer string) bool
	// PageSize is the rows one page holds (0: PageSize). Filters, tabs,
	// counts and sort run over every CSR; only the rows are paged.
	PageSize int
	// Cache keeps per-CSR work between views (nil: none kept).
	Cache *Cache
	// Labels keeps only the CSRs whose labels it selects (nil: every CSR;
	// labels.Nothing() for a selector that did not parse).
	Labels labels.Selector
	// Policies are the CSR approval policies whose verdicts the pending rows
	// show and the policy filter reads (nil: none, the filter keeps nothing).
	Policies *csrpolicy.Compiled
	// Approver is what the console knows of `clusterdesk approver` (its
	// Lease), for why each pending request is pending (Item.Why).
	Approver csrwhy.Approver
}

// Result is one view of the queue.
type Result struct {
	Total   int            // CSRs in the cluster
	Matched int            // CSRs the filters and the state tab keep
	Rows    int            // rows they make once each storm is one row
	Counts  map[string]int // per state, under every filter but the state tab
	Signers map[string]int // CSRs per signer, over every CSR
	// Decidable: some pending request, whatever the filters show, is one the
	// user may decide (the bulk form is offered then, and does not come and
	// go while a person narrows the list).
	Decidable bool
	// Group is the storm a group= view shows (nil for a duplicate set or none).
	Group *Storm
	// Page is the page shown (1-based, clamped to the last), Items its rows.
	Page  int
	Items []*Item
	// Storms is the index of the pending requests.
	Storms *Storms
}

// Item is a CSR with what the queue computes about it, each part once and
// only when needed: with thousands of CSRs, rows are worded only for those
// rendered, the findings only for those, the text filter or the checks sort.
type Item struct {
	CSR     *certificatesv1.CertificateSigningRequest
	State   string
	Decided time.Time
	// Bad: pending, but spec.request does not decode: nobody can decide it.
	Bad bool
	// Storm is set on the item that stands for its storm's group row.
	Storm *Storm
	// ChecksOf is, for a group row, the request whose checks it shows.
	ChecksOf *Item

	f        *facts
	v        *view
	findings []csr.Finding
	checked  bool
	rank     int // checksRank(Findings()), set for the sort by checks (ranked)
}

// ranked sets the item's rank for the sort by checks: a pending request's
// from its findings (the duplicates finding depends on the other requests),
// a decided one's as its facts keep it (no duplicates finding: only pending
// requests are duplicates), without working out its findings again.
func (it *Item) ranked() {
	if it.State == Pending {
		it.rank = checksRank(it.Findings())
		return
	}
	_, _, it.rank = it.f.checkedText(it.CSR, it.v.checks, it.v.words)
}

// view is what the items of one call share.
type view struct {
	checks Checks
	words  Words
	storms *Storms
	// policies are Env.Policies.
	policies *csrpolicy.Compiled
	// approver and now are Env.Approver and Env.Now, for Item.Why, and
	// approvals the index's requesters' approvals (the rate limits' holds).
	approver  csrwhy.Approver
	now       time.Time
	approvals *approvals
	// dupN and dupText are the last duplicates finding the text filter
	// worded (dupWords): it depends on the count alone, and the requests of
	// a storm, thousands, all have one count.
	dupN    int
	dupText string
	// scratch is where the filter expands findings texts kept as templates
	// (findingsContain).
	scratch []byte
}

// dupWords is the duplicates finding of others other requests as the row
// words it (Words.Findings), worded once per count a view meets in a row,
// not once per request of a storm (5,000 texts of garbage for the filter of
// one view). A view's items are tested by one goroutine (Cache.run).
func (v *view) dupWords(others int) string {
	if others != v.dupN || v.dupText == "" {
		v.dupN, v.dupText = others, v.words.Findings(csr.CheckDuplicates(others))
	}
	return v.dupText
}

func (v *view) item(c *certificatesv1.CertificateSigningRequest, f *facts) *Item {
	it := &Item{CSR: c, State: f.state(), Decided: f.decided(c), f: f, v: v}
	if it.State == Pending {
		it.Bad = f.decoded(c, v.checks).req == nil
	}
	return it
}

// Request is the decoded spec.request, or why it does not decode.
func (it *Item) Request() (*csr.Request, error) {
	return it.f.request(it.CSR, it.v.checks)
}

// BaseFindings are the checks' findings but the duplicates finding.
func (it *Item) BaseFindings() []csr.Finding {
	return it.f.check(it.CSR, it.v.checks, it.v.words)
}

// Findings runs the checks once, and adds how many other pending requests
// share the signer and subject (a map lookup in the storm index).
func (it *Item) Findings() []csr.Finding {
	if !it.checked {
		n, _ := it.v.storms.Duplicates(it.CSR.Name)
		it.findings = withDuplicates(it.BaseFindings(), n)
		it.checked = true
	}
	return it.findings
}

// DuplicatesID is the ID of the duplicate set the request is in ("" for none).
func (it *Item) DuplicatesID() string {
	_, id := it.v.storms.Duplicates(it.CSR.Name)
	return id
}

// Run lays out one view of the queue over items: filters, state tabs'
// counts, pending first (oldest first), then approved but not issued
// (longest waiting first), then the decided (most recent first); each storm
// one row unless the view is of one group; the page asked for. env.Cache
// (when given) is brought to hold items, one map lookup per CSR; a Queue's
// Run reads its index without a list (index_run.go does the view).
func Run(items []*certificatesv1.CertificateSigningRequest, q Query, env Env) Result {
	env.PageSize = cmp.Or(env.PageSize, PageSize)
	cache := env.Cache
	if cache == nil {
		cache = &Cache{}
	}
	var res Result
	cache.synced(items, env.Checks, func() { res = cache.run(q, env) })
	return res
}

// window chooses the rows [lo, hi) that page (1-based, size rows per page)
// holds, clamping a page past the end to the last page (a bookmark to page 40
// of a list that shrank opens its last page).
func window(page, size, n int) (lo, hi, clamped int) {
	size = max(size, 1)
	pages := max((n+size-1)/size, 1)
	page = min(max(page, 1), pages)
	lo = min((page-1)*size, n)
	return lo, min(lo+size, n), page
}

func requesterMatches(c *certificatesv1.CertificateSigningRequest, needle string) bool {
	if strings.Contains(strings.ToLower(c.Spec.Username), needle) {
		return true
	}
	return slices.ContainsFunc(c.Spec.Groups, func(g string) bool { return strings.Contains(strings.ToLower(g), needle) })
}

// matches reports whether the row shows needle (lower case). The parts that
// depend on nothing else are searched first, from the cache; the age, the
// wait and the findings after.
func (it *Item) matches(needle string, now time.Time) bool {
	w := it.v.words
	if it.f.staticMatches(it.CSR, it.v.checks, w, needle) {
		return true
	}
	if text, tmpl, _ := it.f.checkedText(it.CSR, it.v.checks, w); it.f.findingsContain(it.CSR, text, tmpl, needle, &it.v.scratch) {
		return true
	}
	if n, _ := it.v.storms.Duplicates(it.CSR.Name); n > 0 {
		if strings.Contains(it.v.dupWords(n), needle) {
			return true
		}
	}
	age, wait := w.Moment(it.CSR, it.State, it.Decided, now)
	return strings.Contains(strings.ToLower(age), needle) || strings.Contains(strings.ToLower(wait), needle)
}

// compareBy orders two items by a sort key, ascending.
func compareBy(key string, a, b *Item, w Words) int {
	switch key {
	case SortAge, SortSigner, SortRequestor, SortDuration:
		return compareCSRs(key, a.CSR, b.CSR)
	case SortState:
		return cmp.Compare(w.Status(a.State), w.Status(b.State))
	case SortChecks: // most severe first, then the most findings; clean rows last
		return cmp.Compare(a.rank, b.rank)
	}
	return compareQueue(a, b)
}

// compareCSRs orders two CSRs by a column that reads the object alone (0 for
// the others).
func compareCSRs(key string, a, b *certificatesv1.CertificateSigningRequest) int {
	switch key {
	case SortAge: // youngest first, as kubectl sorts ages
		return b.CreationTimestamp.Time.Compare(a.CreationTimestamp.Time)
	case SortSigner:
		return cmp.Compare(a.Spec.SignerName, b.Spec.SignerName)
	case SortRequestor:
		return cmp.Compare(a.Spec.Username, b.Spec.Username)
	case SortDuration:
		return cmp.Compare(expiration(a), expiration(b))
	}
	return 0
}

func expiration(c *certificatesv1.CertificateSigningRequest) int32 {
	if c.Spec.ExpirationSeconds == nil {
		return 0
	}
	return *c.Spec.ExpirationSeconds
}

func checksRank(fs []csr.Finding) int {
	worst, ok := csr.Worst(fs)
	if !ok {
		return math.MaxInt
	}
	return (3-int(worst))*1000 + 999 - min(len(fs), 999)
}

// partOf is the part of the queue a CSR in state belongs to. Pending
// requests whose spec.request does not decode (bad) come after the others:
// the API server refuses every approval or denial of them, so they are not
// work to do now.
func partOf(state string, bad bool) int {
	switch {
	case state == Pending && !bad:
		return 0
	case state == Pending:
		return 1
	case state == Approved:
		return 2
	}
	return 3
}

// queuePos is what places a CSR in the queue order.
type queuePos struct {
	part             int
	created, decided time.Time
	name             string
}

func (it *Item) pos() queuePos {
	return queuePos{part: partOf(it.State, it.Bad), created: it.CSR.CreationTimestamp.Time, decided: it.Decided, name: it.CSR.Name}
}

// compareQueue is the queue order: pending (oldest first), approved but not
// issued (longest waiting first), then decided (most recently decided first);
// the name breaks ties so that the order is total and its reverse exact.
func compareQueue(a, b *Item) int { return compareQueuePos(a.pos(), b.pos()) }

func compareQueuePos(a, b queuePos) int {
	if a.part != b.part {
		return cmp.Compare(a.part, b.part)
	}
	var r int
	switch a.part {
	case 0, 1:
		r = a.created.Compare(b.created)
	case 2:
		r = cmpTime(a.decided, a.created).Compare(cmpTime(b.decided, b.created))
	default:
		r = cmpTime(b.decided, b.created).Compare(cmpTime(a.decided, a.created))
	}
	if r != 0 {
		return r
	}
	return cmp.Compare(a.name, b.name)
}

func cmpTime(t, fallback time.Time) time.Time {
	if t.IsZero() {
		return fallback
	}
	return t
}

// collapseStorms keeps, of each storm's pending requests in kept (in order),
// the first, marked to stand for the storm's group row; the checks shown are
// those of the storm's newest request (the one "approve newest" approves)
// when it is in kept.
func collapseStorms(kept []*Item, storms *Storms) []*Item {
	if storms.Len() == 0 {
		return kept
	}
	first := map[string]*Item{}
	out := kept[:0:0]
	for _, it := range kept {
		var st *Storm
		if it.State == Pending && !it.Bad {
			st = storms.Of(it.CSR.Name)
		}
		if st == nil {
			out = append(out, it)
			continue
		}
		rep, seen := first[st.ID]
		if !seen {
			rep = &Item{CSR: it.CSR, State: it.State, Decided: it.Decided, f: it.f, v: it.v, Storm: st, ChecksOf: it}
			first[st.ID] = rep
			out = append(out, rep)
		}
		if it.CSR.Name == st.Newest().Name {
			rep.ChecksOf = it
		}
	}
	return out
}
