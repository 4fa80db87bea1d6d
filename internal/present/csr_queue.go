package present

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// CSRQueueQuery is what the browser asked of the queue (csrqueue.Query);
// the name stays for handlers/cleanup_links.go, which carries its filters.
type CSRQueueQuery = csrqueue.Query

// csrQueueColumns are the queue's columns, one per csrqueue sort key. Row
// cells follow this order; the checks cell is empty in Row.Cells, its
// content is CSRRow.Findings.
var csrQueueColumns = []column{
	{csrqueue.SortQueue, "Request", true},
	{csrqueue.SortState, "State", true},
	{csrqueue.SortChecks, "Checks", true},
	// Why a pending request is pending (issue 47): not a sort key; the
	// why= filter selects by it. Beside the checks, where a narrow window
	// still shows it.
	{"why", "Why pending", false},
	{csrqueue.SortAge, "Age", true},
	{csrqueue.SortSigner, "Signer", true},
	{csrqueue.SortRequestor, "Requestor", true},
	{csrqueue.SortDuration, "Requested duration", true},
}

// CSRQueueEnv is what the queue's page needs besides the engine's view
// (csrqueue.Result) and the query.
type CSRQueueEnv struct {
	Now time.Time
	// MayDecide reports whether the user may approve and deny for a signer;
	// nil means nowhere (read-only mode, or no permission checked).
	MayDecide func(signer string) bool
	// PageSize is the rows one page renders (0: csrqueue.PageSize), the
	// engine's page size of the view.
	PageSize int
	// Selected pre-selects rows, e.g. the CSRs a bulk decision failed for, by
	// their selection value (model.CSRRow.SelectValue: UID and name), so a CSR
	// replaced under the same name is not ticked for the person.
	Selected []string
	// MayDelete offers the bulk form's "Delete selected" and, on a decided
	// state's tab, the requests' tick boxes (elsewhere a box still means
	// "decidable"); RBAC decides again on the preview.
	MayDelete bool
	// Policies are the CSR approval policies whose verdicts pending rows
	// show (nil: none; the user may not list them, or none are served).
	Policies *csrpolicy.Compiled
}

// CSRQueueOf lays out one view of the approval queue that the queue's engine
// made (csrqueue.Queue.Run, which reads its index, not a list of every CSR;
// csrqueue.Run over a list) for q and env: filters, state tabs with counts,
// the rows with the checks' findings, the pager.
func CSRQueueOf(res csrqueue.Result, q CSRQueueQuery, env CSRQueueEnv) model.CSRQueuePage {
	const action = urls.CSRs
	page := model.CSRQueuePage{
		Title:  "CertificateSigningRequests",
		Action: action,
		Filter: model.CSRFilter{Query: q.Filter, State: q.State, Signer: q.Signer, Requester: q.Requester, Age: q.Age, Group: q.Group, Selector: q.Selector,
			Policy: q.Policy, Verdict: q.Verdict, Why: q.Why},
		Sort:    cmp.Or(q.Sort, csrqueue.SortQueue),
		Desc:    q.Desc,
		Total:   res.Total,
		Matched: res.Matched,
		Decide:  env.MayDelete || res.Decidable,
	}
	if res.Group != nil {
		page.Group = groupModel(res.Group, nil, env)
	}
	view := q.Values()
	_, _, pager := paginate(res.Page, cmp.Or(env.PageSize, csrqueue.PageSize), res.Rows, func(n int) string { return withPage(action, view, n) })
	page.Pager, page.View = pager, withPage(action, view, pager.Page)
	// A bulk decision comes back to this page of this view.
	page.Return = view.Encode()
	if pager.Page > 1 {
		page.Return = strings.TrimPrefix(page.View, action+"?")
	}
	page.Shown = len(res.Items)
	selected := map[string]bool{}
	for _, n := range env.Selected {
		selected[n] = true
	}
	for _, it := range res.Items {
		row := *queueRow(it, env)
		row.Selectable = it.Storm == nil && (it.State == CSRPending && !it.Bad && env.MayDecide != nil && env.MayDecide(it.CSR.Spec.SignerName) ||
			// On a decided state's tab the boxes tick requests for "Delete selected".
			env.MayDelete && q.State != "" && q.State != CSRPending)
		row.Selected = row.Selectable && selected[row.SelectValue()]
		page.Rows = append(page.Rows, row)
	}

	page.Tabs = csrTabs(q, res.Counts, action)
	page.Signers = csrSignerOptions(q.Signer, res.Signers)
	page.Ages = csrAgeOptions(q.Age)
	policyFilter(&page, q, env)
	whyFilter(&page, q)
	page.Columns = csrQueueHeaders(q, page.Sort, action)
	switch {
	case res.Total == 0:
		page.Empty = "There are no CertificateSigningRequests in this cluster."
	case page.Matched == 0:
		page.Empty = "No CertificateSigningRequests match these filters."
	}
	return page
}

// CSRQueueWords is how the queue's rows word what its text filter searches
// (csrqueue.Words): the same functions lay out the rows below. The page
// that asks the engine for a view lends it (csrqueue.Env.Words).
type CSRQueueWords struct{}

func (CSRQueueWords) Status(state string) string { return stateBadge(state).Text }

// Static is the row's own text (the subject line) and what it shares with
// other rows (signer, requester, duration, status); the queue searches the
// name's line before them.
func (CSRQueueWords) Static(c *certificatesv1.CertificateSigningRequest, state string, req *csr.Request, decodeErr error) (own, shared string) {
	subject, _, _ := csrSubject(req, decodeErr)
	dur, _ := requestedDuration(c)
	return lowerLines(subject), lowerLines(c.Spec.SignerName, c.Spec.Username, dur, stateBadge(state).Text)
}

func (CSRQueueWords) Findings(fs []csr.Finding) string {
	lines := make([]string, 0, len(fs))
	for _, m := range findingModels(fs) {
		lines = append(lines, m.Label+" "+m.Message)
	}
	return lowerLines(lines...)
}

// lowerLines is the lines lower-cased, each ending in a newline, in a string
// of exactly their length: the queue keeps one per CSR (50,000 of them at
// the page benchmark's shapes), and a strings.Builder grown by doubling
// would keep up to twice the text (TestLowerLinesKeepsExactBytes).
func lowerLines(lines ...string) string {
	n := 0
	for i, l := range lines {
		lines[i] = strings.ToLower(l) // l itself, without a copy, when already lower-case
		n += len(lines[i]) + 1
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, l := range lines {
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// Moment is the text of the age and state cells (ageCell's and stateCell's),
// without their titles and badges: the text filter asks it of every CSR it
// tests, and the cells' other parts were garbage there.
func (CSRQueueWords) Moment(c *certificatesv1.CertificateSigningRequest, state string, decided, now time.Time) (string, string) {
	return ageText(c.CreationTimestamp, now), waitText(state, decided, now)
}

// csrSubject is the decoded subject line (or the decoding error), the row's
// shorter line and how many SANs it puts behind "N more".
func csrSubject(req *csr.Request, decodeErr error) (subject, short string, more int) {
	if req == nil {
		msg := "Bad request"
		if decodeErr != nil {
			msg += ": " + decodeErr.Error()
		}
		return msg, msg, 0
	}
	short, more = subjectLine(req)
	return subjectSummary(req), short, more
}

// stateCell is the state column: the badge, and how long an approved request
// has waited for its certificate.
func stateCell(state string, decided, now time.Time) model.Cell {
	cell := model.Cell{Badges: []model.Badge{stateBadge(state)}, Text: waitText(state, decided, now)}
	if cell.Text != "" {
		cell.Title = "approved " + decided.UTC().Format(time.RFC3339) + "; the signer has not issued a certificate since"
	}
	return cell
}

// waitText is the state column's text: how long an approved request has
// waited for its certificate ("" for any other).
func waitText(state string, decided, now time.Time) string {
	if state == CSRApproved && !decided.IsZero() {
		return "waiting " + duration.HumanDuration(now.Sub(decided))
	}
	return ""
}

// queueRow lays out the row of an item: a request's, or its storm's group row.
func queueRow(it *csrqueue.Item, env CSRQueueEnv) *model.CSRRow {
	if it.Storm != nil {
		return groupRow(it, env)
	}
	c := it.CSR
	req, err := it.Request()
	_, short, more := csrSubject(req, err)
	ageC, _ := ageCell(c.CreationTimestamp, env.Now)
	dur, _ := requestedDuration(c)
	requester := model.Cell{Text: c.Spec.Username, Mono: true}
	if len(c.Spec.Groups) > 0 {
		requester.Title = "groups: " + strings.Join(c.Spec.Groups, ", ")
	}
	row := &model.CSRRow{State: it.State, Subject: short, SubjectBad: req == nil, UID: string(c.UID)}
	if more > 0 {
		row.MoreSANs = model.MoreValues{Count: more, Href: urls.CSRSANs(c.Name, string(c.UID)), PageHref: urls.CSR(c.Name)}
	}
	row.Findings = findingModels(it.Findings())
	linkDuplicates(row.Findings, it.DuplicatesID())
	row.Verdicts = verdictModels(it.Verdicts())
	row.Row = model.Row{
		ID:   "row-csrs-" + c.Name,
		Name: c.Name,
		Href: urls.CSR(c.Name),
		Cells: []model.Cell{
			{Text: c.Name, Mono: true},
			stateCell(it.State, it.Decided, env.Now),
			{}, // checks: row.Findings
			whyCell(it),
			ageC,
			{Text: c.Spec.SignerName, Mono: true},
			requester,
			{Text: dur},
		},
	}
	return row
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
		return model.CSRTab{Key: key, Label: label, Count: n, Href: tq.Href(action), Active: q.State == key, Tone: tone}
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
	for _, a := range csrqueue.Ages {
		opts = append(opts, model.CSROption{Value: a.Key, Label: a.Label, Selected: a.Key == current})
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
		mc.SortHref = lq.Href(action)
		cols = append(cols, mc)
	}
	return cols
}
