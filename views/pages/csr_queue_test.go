package pages

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/views/internal/viewtest"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func csrQueuePage(decide bool) model.CSRQueuePage {
	cols := []model.Column{
		{Key: "queue", Label: "Request", Sortable: true, SortHref: "/csrs?dir=desc&sort=queue", Sorted: "asc"},
		{Key: "condition", Label: "State", Sortable: true, SortHref: "/csrs?sort=condition"},
		{Key: "checks", Label: "Checks", Sortable: true, SortHref: "/csrs?sort=checks"},
		{Key: "age", Label: "Age", Sortable: true, SortHref: "/csrs?sort=age"},
		{Key: "signer", Label: "Signer", Sortable: true, SortHref: "/csrs?sort=signer"},
		{Key: "requestor", Label: "Requestor", Sortable: true, SortHref: "/csrs?sort=requestor"},
		{Key: "duration", Label: "Requested duration", Sortable: true, SortHref: "/csrs?sort=duration"},
	}
	row := func(name, state string, selectable bool, fs ...model.CSRFinding) model.CSRRow {
		return model.CSRRow{
			Row: model.Row{ID: "row-csrs-" + name, Name: name, Href: "/csrs/" + name, Cells: []model.Cell{
				{Text: name}, {Badges: []model.Badge{{Text: "Pending", Tone: model.TonePending}}}, {}, {Text: "5m"},
				{Text: "kubernetes.io/kube-apiserver-client", Mono: true},
				{Text: "admin", Mono: true, Title: "groups: system:masters"}, {Text: "<none>"},
			}},
			Subject: "CN=" + viewtest.XSS, Findings: fs, State: state, Selectable: selectable, Selected: selectable && name == "b",
		}
	}
	return model.CSRQueuePage{
		Chrome: viewtest.Chrome(!decide), Title: "CertificateSigningRequests", Action: "/csrs",
		Filter: model.CSRFilter{State: "pending", Query: viewtest.XSS},
		Tabs: []model.CSRTab{
			{Key: "", Label: "All", Count: 3, Href: "/csrs"},
			{Key: "pending", Label: "Pending", Count: 2, Href: "/csrs?state=pending", Active: true, Tone: model.TonePending},
		},
		Signers: []model.CSROption{{Value: "", Label: "Any signer"}, {Value: "s", Label: viewtest.XSS, Selected: true}},
		Ages:    []model.CSROption{{Value: "", Label: "Any age", Selected: true}},
		Sort:    "queue", Columns: cols,
		Rows: []model.CSRRow{
			row("a", "pending", decide, model.CSRFinding{Check: "privileged-group", Tone: model.ToneError, Label: "Danger", Message: viewtest.XSS}),
			row("b", "pending", decide),
			row("c", "issued", false),
		},
		Total: 3, Matched: 3, Shown: 3, Decide: decide, Return: "state=pending",
		Bulk: &model.CSRBulkResult{Verb: "Approved", Succeeded: 1, Failed: 1, Items: []model.CSRBulkItem{
			{Name: "a", Href: "/csrs/a", OK: true, Message: "approved."},
			{Name: "b", Href: "/csrs/b", Message: "not approved: " + viewtest.XSS, Warnings: []string{"w"}},
		}},
		Message: "kept",
	}
}

func TestCSRQueuePage(t *testing.T) {
	doc, raw := viewtest.Render(t, CSRQueue(csrQueuePage(true)))
	viewtest.AssertCSPSafe(t, doc)
	viewtest.AssertEscaped(t, doc, raw)

	// The generic list contract the other pages and tests rely on.
	keys := doc.Find(`[data-testid="list-table"] thead th`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-column", "") })
	if strings.Join(keys, ",") != "queue,condition,checks,age,signer,requestor,duration" {
		t.Errorf("column keys = %v", keys)
	}
	rows := doc.Find(`[data-testid="list-row"]`)
	if rows.Length() != 3 || rows.First().Find(`th[scope=row] a`).Text() != "a" || rows.First().Children().Length() != 7 {
		t.Fatalf("rows: %d, first link %q, cells %d", rows.Length(), rows.First().Find(`th[scope=row] a`).Text(), rows.First().Children().Length())
	}
	cellKeys := rows.First().Children().Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("data-column", "") })
	if strings.Join(cellKeys, ",") != strings.Join(keys, ",") {
		t.Errorf("row cells %v do not follow the columns %v", cellKeys, keys)
	}
	if rows.First().Find(`a[href]`).First().AttrOr("href", "") != "/csrs/a" {
		t.Error("the first link of a row opens the CSR")
	}
	if got := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("list-count"))); got != "Showing 3 of 3" {
		t.Errorf("count = %q", got)
	}

	// Selection: checkboxes join the bulk form by id; only selectable rows have one.
	boxes := doc.Find(`[data-testid="row-select"]`)
	if boxes.Length() != 2 || boxes.First().AttrOr("form", "") != CSRBulkFormID || boxes.First().AttrOr("name", "") != "names" {
		t.Fatalf("checkboxes: %d", boxes.Length())
	}
	if _, checked := boxes.Eq(1).Attr("checked"); !checked {
		t.Error("a pre-selected row is checked")
	}
	form := viewtest.One(t, doc, "#"+CSRBulkFormID)
	if form.AttrOr("method", "") != "post" || form.AttrOr("action", "") != "/csrs/bulk" || form.Find(`input[name=_csrf]`).AttrOr("value", "") != "csrf-token-123" {
		t.Errorf("bulk form: method %q action %q", form.AttrOr("method", ""), form.AttrOr("action", ""))
	}
	if form.Find(`button[name=action][value=approve]`).Length() != 1 || form.Find(`button[name=action][value=deny]`).Length() != 1 {
		t.Error("approve and deny are submit buttons of the form (works without script)")
	}
	if viewtest.One(t, doc, viewtest.TestID("bulk-message")).AttrOr("value", "") != "kept" {
		t.Error("the message survives a partial failure")
	}
	if doc.Find(`input[type=hidden][form="csr-bulk"][name=return]`).AttrOr("value", "") != "state=pending" {
		t.Error("the bulk form returns to the same view")
	}
	if doc.Find(`input[type=hidden][form="filter-form"][name=state]`).AttrOr("value", "") != "pending" {
		t.Error("the state tab travels with the filter form")
	}

	// Tabs, findings and the bulk result.
	active := viewtest.One(t, doc, `[data-testid="tab-pending"]`)
	if active.AttrOr("aria-current", "") != "page" || viewtest.Text(active.Find(`[data-testid="tab-count"]`)) != "2" {
		t.Error("active tab and its count")
	}
	f := doc.Find(`[data-testid="finding"]`)
	if f.Length() != 1 || f.AttrOr("data-tone", "") != "error" || !strings.Contains(viewtest.Text(f), "Danger:") {
		t.Errorf("finding: %d %q", f.Length(), viewtest.Text(f))
	}
	if got := doc.Find(viewtest.TestID("bulk-results")).AttrOr("data-return-url", ""); got != "/csrs?state=pending" {
		t.Errorf("the result names the queue view it returns to: %q", got)
	}
	results := doc.Find(`[data-testid="bulk-result"]`)
	if results.Length() != 2 || results.Eq(1).AttrOr("data-ok", "") != "false" || !strings.Contains(viewtest.Text(viewtest.One(t, doc, viewtest.TestID("bulk-summary"))), "1 of 2") {
		t.Errorf("bulk results: %d", results.Length())
	}
}

func TestCSRQueueWithoutDecisions(t *testing.T) {
	p := csrQueuePage(false)
	p.Bulk = nil
	doc, _ := viewtest.Render(t, CSRQueue(p))
	if doc.Find(`#`+CSRBulkFormID).Length() != 0 || doc.Find(`[data-testid="row-select"]`).Length() != 0 || doc.Find(`form[method=post][action*="/csrs/"]`).Length() != 0 {
		t.Error("no bulk form and no checkboxes for a user who may not decide")
	}

	p.Forbidden, p.Rows = true, nil
	doc, _ = viewtest.Render(t, CSRQueue(p))
	if doc.Find(viewtest.TestID("list-forbidden")).Length() != 1 || doc.Find(viewtest.TestID("filter-form")).Length() != 0 {
		t.Error("forbidden: an explanation, no filters")
	}
}

func TestCSRQueueTableIsAFragment(t *testing.T) {
	_, raw := viewtest.Render(t, CSRQueueTable(csrQueuePage(true)))
	if strings.Contains(raw, "<html") || !strings.HasPrefix(raw, `<div id="list-table"`) {
		t.Errorf("fragment starts %.60q", raw)
	}
}

func TestCSRDetailPage(t *testing.T) {
	p := model.CSRDetailPage{
		DetailPage: viewtest.DetailPage(),
		Findings:   []model.CSRFinding{{Check: "requester", Tone: model.ToneError, Label: "Danger", Message: viewtest.XSS}},
		ChecksNote: "note", CertificateHref: "/csrs/x/certificate",
	}
	doc, raw := viewtest.Render(t, CSRDetail(p))
	viewtest.AssertCSPSafe(t, doc)
	viewtest.AssertEscaped(t, doc, raw)
	checks := viewtest.One(t, doc, viewtest.TestID("csr-checks"))
	if checks.Find(`[data-testid="finding"][data-check="requester"]`).Length() != 1 || !strings.Contains(viewtest.Text(checks), "note") {
		t.Error("findings and the note are in the checks panel")
	}
	dl := viewtest.One(t, doc, viewtest.TestID("certificate-download"))
	if dl.AttrOr("href", "") != "/csrs/x/certificate" {
		t.Error("download link")
	}
	for _, id := range []string{"detail-name", "detail-status", "fields", "yaml"} {
		viewtest.One(t, doc, viewtest.TestID(id))
	}

	p.Findings, p.CertificateHref = nil, ""
	doc, _ = viewtest.Render(t, CSRDetail(p))
	if doc.Find(viewtest.TestID("csr-checks-none")).Length() != 1 || doc.Find(viewtest.TestID("certificate-download")).Length() != 0 {
		t.Error("no findings says so; no download before issue")
	}
}
