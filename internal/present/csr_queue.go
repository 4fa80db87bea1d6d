package present

import (
	"cmp"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// CSRQueueQuery is what the browser asked of the queue.
type CSRQueueQuery struct {
	Filter    string // q: free text over the visible columns
	State     string // state: "" for all, or a state key
	Signer    string // signer: exact
	Requester string // requester: part of the username or a group
	Age       string // age: one of csrAges' keys
	Group     string // group: a storm's or a duplicate set's ID (csr.Storms), its members one row each
	Sort      string // sort: a column key; "" is queue order
	Desc      bool   // dir=desc
	Page      int    // page: 1-based; 0 is the first page
	// Selector is the label selector as typed (selector=, kubectl -l syntax);
	// the handler parses it (ParseSelector) into CSRQueueEnv.Labels.
	Selector string
}

// ParseCSRQueueQuery reads the queue's query parameters. Unknown states, ages
// and sort keys are dropped rather than refused: an old bookmark still opens.
func ParseCSRQueueQuery(v url.Values) CSRQueueQuery {
	q := CSRQueueQuery{
		Filter:    strings.TrimSpace(v.Get("q")),
		State:     v.Get("state"),
		Signer:    strings.TrimSpace(v.Get("signer")),
		Requester: strings.TrimSpace(v.Get("requester")),
		Selector:  strings.TrimSpace(v.Get("selector")),
		Age:       v.Get("age"),
		Group:     v.Get("group"),
		Sort:      v.Get("sort"),
		Desc:      v.Get("dir") == "desc",
		Page:      parsePage(v),
	}
	if !slices.ContainsFunc(csrStates, func(s csrStateTab) bool { return s.key == q.State }) {
		q.State = ""
	}
	if _, ok := csrAgeLimit(q.Age); !ok {
		q.Age = ""
	}
	if !slices.ContainsFunc(csrQueueColumns, func(c column) bool { return c.Key == q.Sort }) {
		q.Sort = ""
	}
	if !validGroupID(q.Group) {
		q.Group = ""
	}
	return q
}

// Values encodes the query as URL parameters, leaving out defaults and the
// page: a link that changes the filter, tab or sort starts on the first page.
func (q CSRQueueQuery) Values() url.Values {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("q", q.Filter)
	set("state", q.State)
	set("signer", q.Signer)
	set("requester", q.Requester)
	set("selector", q.Selector)
	set("age", q.Age)
	set("group", q.Group)
	set("sort", q.Sort)
	if q.Desc {
		v.Set("dir", "desc")
	}
	return v
}

func (q CSRQueueQuery) href(action string) string {
	if enc := q.Values().Encode(); enc != "" {
		return action + "?" + enc
	}
	return action
}

// csrQueueSortDefault is the first column: the queue order.
const csrQueueSortDefault = "queue"

// csrQueueColumns are the queue's columns. Row cells follow this order; the
// checks cell is empty in Row.Cells, its content is CSRRow.Findings.
var csrQueueColumns = []column{
	{csrQueueSortDefault, "Request", true},
	{"condition", "State", true},
	{"checks", "Checks", true},
	{"age", "Age", true},
	{"signer", "Signer", true},
	{"requestor", "Requestor", true},
	{"duration", "Requested duration", true},
}

// csrAges are the age filter's choices: created less or more than a duration ago.
var csrAges = []struct {
	key, label string
	limit      time.Duration // negative: younger than -limit; positive: older than limit
}{
	{"lt1h", "Newer than 1 hour", -time.Hour},
	{"lt24h", "Newer than 1 day", -24 * time.Hour},
	{"gt1h", "Older than 1 hour", time.Hour},
	{"gt24h", "Older than 1 day", 24 * time.Hour},
	{"gt7d", "Older than 7 days", 7 * 24 * time.Hour},
}

func csrAgeLimit(key string) (time.Duration, bool) {
	if key == "" {
		return 0, true
	}
	for _, a := range csrAges {
		if a.key == key {
			return a.limit, true
		}
	}
	return 0, false
}

func ageMatches(limit time.Duration, created, now time.Time) bool {
	age := now.Sub(created)
	switch {
	case limit < 0:
		return age < -limit
	case limit > 0:
		return age > limit
	}
	return true
}

// CSRQueueEnv is what the queue needs besides the CSRs and the query.
type CSRQueueEnv struct {
	Now    time.Time
	Checks CSRChecksEnv
	// MayDecide reports whether the user may approve and deny for a signer;
	// nil means nowhere (read-only mode, or no permission checked).
	MayDecide func(signer string) bool
	// PageSize is the rows one page renders (0: PageSize). Filters, tabs,
	// counts and sort run over every CSR; only the rows are paged.
	PageSize int
	// Selected pre-selects rows, e.g. the CSRs a bulk decision failed for, by
	// their selection value (model.CSRRow.SelectValue: UID and name), so a CSR
	// replaced under the same name is not ticked for the person.
	Selected []string
	// Cache keeps per-CSR work between views (nil: none kept).
	Cache *CSRQueueCache
	// Labels keeps only the CSRs whose labels it selects (nil: every CSR;
	// labels.Nothing() for a selector that did not parse).
	Labels labels.Selector
	// MayDelete offers the bulk form's "Delete selected" and, on a decided
	// state's tab, the requests' tick boxes (elsewhere a box still means
	// "decidable"); RBAC decides again on the preview.
	MayDelete bool
}

// queueItem is a CSR with what the queue computes about it, each part once
// and only when needed: with thousands of CSRs, the rows are built only for
// those rendered, the findings only for those, the text filter or the checks sort.
type queueItem struct {
	c        *certificatesv1.CertificateSigningRequest
	f        *csrFacts // what does not change between views
	state    string
	status   model.Badge
	decided  time.Time
	bad      bool       // pending, but spec.request does not decode: nobody can decide it
	storm    *csr.Storm // set on the item that stands for its storm's group row
	checksOf *queueItem // for a group row: the request whose checks it shows
	findings []csr.Finding
	checked  bool
	row      *model.CSRRow
}

// CSRQueue lays out the approval queue: filters, state tabs with counts,
// pending first (oldest first), then approved but not issued (longest waiting
// first), then the decided (most recent first); the checks' findings per row.
func CSRQueue(items []*certificatesv1.CertificateSigningRequest, q CSRQueueQuery, env CSRQueueEnv) model.CSRQueuePage {
	const action = urls.CSRs
	cache := env.Cache
	if cache == nil {
		cache = &CSRQueueCache{}
	}
	// One map lookup per CSR; the grouping itself is rebuilt only when the
	// CSRs changed since the last view.
	facts, storms := cache.load(items, env.Checks)
	ageLimit, _ := csrAgeLimit(q.Age)
	needle := strings.ToLower(q.Filter)
	requester := strings.ToLower(q.Requester)

	page := model.CSRQueuePage{
		Title:  "CertificateSigningRequests",
		Action: action,
		Filter: model.CSRFilter{Query: q.Filter, State: q.State, Signer: q.Signer, Requester: q.Requester, Age: q.Age, Group: q.Group, Selector: q.Selector},
		Sort:   cmp.Or(q.Sort, csrQueueSortDefault),
		Desc:   q.Desc,
		Total:  len(items),
	}

	counts := map[string]int{}
	signers := map[string]int{}
	var kept []*queueItem
	// Item records come in chunks rather than one allocation each: a view of
	// 50,000 CSRs otherwise spends its time in the allocator and the GC; a
	// chunk bounds what a narrow filter allocates for nothing.
	page.Decide = env.MayDelete
	var slab []queueItem
	for i, c := range items {
		signers[c.Spec.SignerName]++
		f := facts[i]
		state := f.state
		// The bulk form is offered whatever the filters show, so that it does
		// not come and go while a person narrows the list.
		if !page.Decide && env.MayDecide != nil && state == CSRPending && env.MayDecide(c.Spec.SignerName) {
			page.Decide = true
		}
		if env.Labels != nil && !env.Labels.Matches(labels.Set(c.Labels)) {
			continue
		}
		if q.Signer != "" && c.Spec.SignerName != q.Signer {
			continue
		}
		if !ageMatches(ageLimit, c.CreationTimestamp.Time, env.Now) {
			continue
		}
		if requester != "" && !requesterMatches(c, requester) {
			continue
		}
		if q.Group != "" && !storms.InSet(q.Group, c.Name) {
			continue
		}
		if len(slab) == cap(slab) {
			slab = make([]queueItem, 0, min(1024, len(items)))
		}
		slab = append(slab, queueItem{c: c, f: f, state: state, status: f.status, decided: f.decided})
		it := &slab[len(slab)-1]
		if state == CSRPending {
			it.bad = f.decoded(c, env.Checks).req == nil
		}
		if needle != "" && !it.matches(needle, storms, env) {
			continue
		}
		counts[state]++
		if q.State != "" && state != q.State {
			continue
		}
		kept = append(kept, it)
	}

	if page.Sort == "checks" {
		for _, it := range kept {
			it.check(storms, env)
		}
	}
	slices.SortStableFunc(kept, func(a, b *queueItem) int {
		r := compareBy(page.Sort, a, b)
		if r == 0 {
			r = compareQueue(a, b)
		}
		if q.Desc {
			return -r
		}
		return r
	})

	page.Matched = len(kept)
	// A storm is one row, where its first request in this order would be; a
	// view of one group shows its requests one by one.
	if q.Group == "" {
		kept = collapseStorms(kept, storms)
	} else if st := storms.ByID(q.Group); st != nil {
		page.Group = groupModel(st, nil, env)
	}
	view := q.Values()
	lo, hi, pager := paginate(q.Page, cmp.Or(env.PageSize, PageSize), len(kept), func(n int) string { return withPage(action, view, n) })
	page.Pager, page.View = pager, withPage(action, view, pager.Page)
	// A bulk decision comes back to this page of this view.
	page.Return = view.Encode()
	if pager.Page > 1 {
		page.Return = strings.TrimPrefix(page.View, action+"?")
	}
	kept = kept[lo:hi]
	page.Shown = len(kept)
	selected := map[string]bool{}
	for _, n := range env.Selected {
		selected[n] = true
	}
	for _, it := range kept {
		row := *it.build(storms, env).row
		row.Selectable = it.storm == nil && (it.state == CSRPending && !it.bad && env.MayDecide != nil && env.MayDecide(it.c.Spec.SignerName) ||
			// On a decided state's tab the boxes tick requests for "Delete selected".
			env.MayDelete && q.State != "" && q.State != CSRPending)
		row.Selected = row.Selectable && selected[row.SelectValue()]
		page.Rows = append(page.Rows, row)
	}

	page.Tabs = csrTabs(q, counts, action)
	page.Signers = csrSignerOptions(q.Signer, signers)
	page.Ages = csrAgeOptions(q.Age)
	page.Columns = csrQueueHeaders(q, page.Sort, action)
	switch {
	case len(items) == 0:
		page.Empty = "There are no CertificateSigningRequests in this cluster."
	case page.Matched == 0:
		page.Empty = "No CertificateSigningRequests match these filters."
	}
	return page
}

func requesterMatches(c *certificatesv1.CertificateSigningRequest, needle string) bool {
	if strings.Contains(strings.ToLower(c.Spec.Username), needle) {
		return true
	}
	return slices.ContainsFunc(c.Spec.Groups, func(g string) bool { return strings.Contains(strings.ToLower(g), needle) })
}

// check runs the checks once, and adds how many other pending requests share
// the signer and subject (a map lookup in the storm index).
func (it *queueItem) check(storms *csr.Storms, env CSRQueueEnv) []csr.Finding {
	if !it.checked {
		base, _ := it.f.check(it.c, env.Checks)
		n, _ := storms.Duplicates(it.c.Name)
		it.findings = withDuplicates(base, n)
		it.checked = true
	}
	return it.findings
}

// stateCell is the state column: the badge, and how long an approved request
// has waited for its certificate.
func (it *queueItem) stateCell(now time.Time) model.Cell {
	cell := model.Cell{Badges: []model.Badge{it.status}}
	if it.state == CSRApproved && !it.decided.IsZero() {
		cell.Text = "waiting " + duration.HumanDuration(now.Sub(it.decided))
		cell.Title = "approved " + it.decided.UTC().Format(time.RFC3339) + "; the signer has not issued a certificate since"
	}
	return cell
}

// matches reports whether the row shows needle (lower case). The filter
// matches what the row shows, and only that: a person must be able to see
// why a row matched. The parts that depend on nothing else are searched
// first, from the cache; the age, the wait and the findings after.
func (it *queueItem) matches(needle string, storms *csr.Storms, env CSRQueueEnv) bool {
	if strings.Contains(it.f.decoded(it.c, env.Checks).static, needle) {
		return true
	}
	if _, text := it.f.check(it.c, env.Checks); strings.Contains(text, needle) {
		return true
	}
	if n, _ := storms.Duplicates(it.c.Name); n > 0 {
		for _, m := range findingModels(csr.CheckDuplicates(n)) {
			if strings.Contains(strings.ToLower(m.Label+" "+m.Message), needle) {
				return true
			}
		}
	}
	ageC, _ := ageCell(it.c.CreationTimestamp, env.Now)
	return strings.Contains(strings.ToLower(ageC.Text), needle) || strings.Contains(strings.ToLower(it.stateCell(env.Now).Text), needle)
}

// build lays out the row once.
func (it *queueItem) build(storms *csr.Storms, env CSRQueueEnv) *queueItem {
	if it.row != nil {
		return it
	}
	c := it.c
	f := it.f.decoded(c, env.Checks)
	ageC, _ := ageCell(c.CreationTimestamp, env.Now)
	stateCell := it.stateCell(env.Now)
	requester := model.Cell{Text: c.Spec.Username, Mono: true}
	if len(c.Spec.Groups) > 0 {
		requester.Title = "groups: " + strings.Join(c.Spec.Groups, ", ")
	}

	if it.storm != nil {
		it.row = groupRow(it, storms, env)
		return it
	}
	row := &model.CSRRow{State: it.state, Subject: f.shortLine, MoreSANs: f.moreSANs, SubjectBad: f.req == nil, UID: string(c.UID)}
	row.Findings = findingModels(it.check(storms, env))
	_, dupID := storms.Duplicates(c.Name)
	linkDuplicates(row.Findings, dupID)
	row.Row = model.Row{
		ID:   "row-csrs-" + c.Name,
		Name: c.Name,
		Href: urls.CSR(c.Name),
		Cells: []model.Cell{
			{Text: c.Name, Mono: true},
			stateCell,
			{}, // checks: row.Findings
			ageC,
			{Text: c.Spec.SignerName, Mono: true},
			requester,
			{Text: f.dur},
		},
	}
	it.row = row
	return it
}

// compareBy orders two items by a column, ascending.
func compareBy(col string, a, b *queueItem) int {
	switch col {
	case "age": // youngest first, as kubectl sorts ages
		return b.c.CreationTimestamp.Time.Compare(a.c.CreationTimestamp.Time)
	case "signer":
		return cmp.Compare(a.c.Spec.SignerName, b.c.Spec.SignerName)
	case "requestor":
		return cmp.Compare(a.c.Spec.Username, b.c.Spec.Username)
	case "duration":
		return cmp.Compare(expiration(a.c), expiration(b.c))
	case "condition":
		return cmp.Compare(a.status.Text, b.status.Text)
	case "checks": // most severe first, then the most findings; clean rows last
		return cmp.Compare(checksRank(a.findings), checksRank(b.findings))
	}
	return compareQueue(a, b)
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

// queueGroup is the part of the queue an item belongs to. Pending requests
// whose spec.request does not decode come after the others: the API server
// refuses every approval or denial of them, so they are not work to do now.
func queueGroup(it *queueItem) int {
	switch {
	case it.state == CSRPending && !it.bad:
		return 0
	case it.state == CSRPending:
		return 1
	case it.state == CSRApproved:
		return 2
	}
	return 3
}

// compareQueue is the queue order: pending (oldest first), approved but not
// issued (longest waiting first), then decided (most recently decided first);
// the name breaks ties so that the order is total and its reverse exact.
func compareQueue(a, b *queueItem) int {
	ga, gb := queueGroup(a), queueGroup(b)
	if ga != gb {
		return cmp.Compare(ga, gb)
	}
	var r int
	switch ga {
	case 0, 1:
		r = a.c.CreationTimestamp.Time.Compare(b.c.CreationTimestamp.Time)
	case 2:
		r = cmpTime(a.decided, a.c.CreationTimestamp.Time).Compare(cmpTime(b.decided, b.c.CreationTimestamp.Time))
	default:
		r = cmpTime(b.decided, b.c.CreationTimestamp.Time).Compare(cmpTime(a.decided, a.c.CreationTimestamp.Time))
	}
	if r != 0 {
		return r
	}
	return cmp.Compare(a.c.Name, b.c.Name)
}

func cmpTime(t, fallback time.Time) time.Time {
	if t.IsZero() {
		return fallback
	}
	return t
}

// subjectSummary is the decoded subject and SANs in one line, e.g.
// "CN=system:node:w, O=system:nodes · DNS w · IP 10.0.0.1 · ECDSA P-256".
func subjectSummary(r *csr.Request) string {
	parts := []string{"CN=" + orDash(r.CommonName)}
	if len(r.Organizations) > 0 {
		parts[0] += ", O=" + strings.Join(r.Organizations, "+")
	}
	if len(r.OrganizationalUnit) > 0 {
		parts[0] += ", OU=" + strings.Join(r.OrganizationalUnit, "+")
	}
	add := func(label string, vs []string) {
		if len(vs) > 0 {
			parts = append(parts, label+" "+strings.Join(vs, ", "))
		}
	}
	add("DNS", r.DNSNames)
	add("IP", r.IPAddresses)
	add("email", r.EmailAddresses)
	add("URI", r.URIs)
	parts = append(parts, r.PublicKey)
	return strings.Join(parts, " · ")
}

func csrTabs(q CSRQueueQuery, counts map[string]int, action string) []model.CSRTab {
	all := 0
	for _, n := range counts {
		all += n
	}
	tab := func(key, label string, n int, tone model.Tone) model.CSRTab {
		tq := q
		tq.State = key
		return model.CSRTab{Key: key, Label: label, Count: n, Href: tq.href(action), Active: q.State == key, Tone: tone}
	}
	tabs := []model.CSRTab{tab("", "All", all, model.ToneNeutral)}
	for _, s := range csrStates {
		tabs = append(tabs, tab(s.key, s.label, counts[s.key], s.tone))
	}
	return tabs
}

func csrSignerOptions(current string, signers map[string]int) []model.CSROption {
	names := make([]string, 0, len(signers))
	for s := range signers {
		names = append(names, s)
	}
	slices.Sort(names)
	opts := []model.CSROption{{Value: "", Label: "Any signer", Selected: current == ""}}
	found := current == ""
	for _, s := range names {
		opts = append(opts, model.CSROption{Value: s, Label: fmt.Sprintf("%s (%d)", s, signers[s]), Selected: s == current})
		found = found || s == current
	}
	if !found {
		// A signer with no CSRs (any more) stays selectable, so the form shows what filters.
		opts = append(opts, model.CSROption{Value: current, Label: current + " (0)", Selected: true})
	}
	return opts
}

func csrAgeOptions(current string) []model.CSROption {
	opts := []model.CSROption{{Value: "", Label: "Any age", Selected: current == ""}}
	for _, a := range csrAges {
		opts = append(opts, model.CSROption{Value: a.key, Label: a.label, Selected: a.key == current})
	}
	return opts
}

// csrQueueHeaders builds the column headers with their sort links; a link on
// the sorted column flips its direction.
func csrQueueHeaders(q CSRQueueQuery, sorted, action string) []model.Column {
	cols := make([]model.Column, 0, len(csrQueueColumns))
	for _, c := range csrQueueColumns {
		mc := model.Column{Key: c.Key, Label: c.Label, Sortable: c.Sortable, Priority: columnPriority("csrqueue", c.Key)}
		lq := q
		lq.Sort, lq.Desc = c.Key, false
		if c.Key == sorted {
			mc.Sorted = "asc"
			if q.Desc {
				mc.Sorted = "desc"
			} else {
				lq.Desc = true
			}
		}
		mc.SortHref = lq.href(action)
		cols = append(cols, mc)
	}
	return cols
}
