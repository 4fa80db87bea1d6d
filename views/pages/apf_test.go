package pages

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/views/internal/viewtest"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func flowSchemaListPage() model.FlowSchemaListPage {
	list := model.ListPage{
		Chrome: viewtest.Chrome(false), KindID: "flowschemas", Title: "FlowSchemas", Action: "/flowschemas",
		Sort: "order", Total: 3, Shown: 2,
		Columns: []model.Column{
			{Key: "order", Label: "#", Sortable: true, SortHref: "/flowschemas?dir=desc&sort=order", Sorted: "asc"},
			{Key: "name", Label: "Name", Sortable: true, SortHref: "/flowschemas?sort=name"},
			{Key: "precedence", Label: "Precedence", Sortable: true, SortHref: "/flowschemas?sort=precedence"},
			{Key: "prioritylevel", Label: "Priority level", Sortable: true, SortHref: "/flowschemas?sort=prioritylevel"},
			{Key: "distinguisher", Label: "Distinguisher", Sortable: true, SortHref: "/flowschemas?sort=distinguisher"},
			{Key: "rules", Label: "Matches"},
		},
	}
	return model.FlowSchemaListPage{
		List:         list,
		ClassifyHref: "/flowschemas/-/classify",
		Notes:        []model.Banner{{Tone: model.ToneWarning, Title: "No usable FlowSchema", TestID: "banner-builtin-exempt"}},
		Rows: []model.FlowSchemaRow{
			{ID: "row-flowschemas-exempt", Position: "1", Name: "exempt", Href: "/flowschemas/exempt",
				NameBadges: []model.Badge{{Text: "Mandatory", Tone: model.ToneWarning}}, Precedence: "1",
				PriorityLevel: "exempt", PriorityLevelHref: "/prioritylevels/exempt", Distinguisher: "<none>", Summary: "group system:masters → " + viewtest.XSS},
			{ID: "row-flowschemas-ghost", Position: "2", Name: "ghost", Href: "/flowschemas/ghost", Precedence: "9000",
				PriorityLevel: "missing", PriorityLevelBadges: []model.Badge{{Text: "Missing", Tone: model.ToneError}}, Skipped: true},
		},
	}
}

func classifyPage() model.ClassifyPage {
	return model.ClassifyPage{
		Chrome:   viewtest.Chrome(false),
		Form:     model.ClassifyForm{Submitted: true, User: viewtest.XSS, Verb: "list", Resource: "pods", ExactGroups: true},
		Errors:   map[string]string{"path": "Give a URL path"},
		Examples: []model.ClassifyExample{{Label: "A node", Href: "/flowschemas/-/classify?user=n"}},
		Action:   "/flowschemas/-/classify", ListHref: "/flowschemas",
		Result: &model.ClassifyResult{
			Identity: "user " + viewtest.XSS, Request: "list pods", FlowSchema: "global-default", FlowSchemaHref: "/flowschemas/global-default",
			Position: "10 of 11", Precedence: "9900", MatchedRule: "rule 1: subject group system:authenticated and resourceRule match",
			PriorityLevel: "global-default", PriorityLevelHref: "/prioritylevels/global-default", PriorityLevelType: "Limited",
			Distinguisher: "ByUser", DistinguisherValue: "", DistinguisherNote: "note",
			Trace: []model.ClassifyStep{
				{Position: "1", FlowSchema: "exempt", Href: "/flowschemas/exempt", Precedence: "1", Outcome: model.Badge{Text: "No match"}, Reasons: []string{"rule 1: no subject matches"}},
				{Position: "2", FlowSchema: "global-default", Href: "/flowschemas/global-default", Precedence: "9900", Outcome: model.Badge{Text: "Matched", Tone: model.ToneOK}, Matched: true},
			},
		},
	}
}

func TestAPFPagesAreCSPSafeEscapedAndLabelled(t *testing.T) {
	for name, c := range map[string]func() (*goquery.Document, string){
		"list":     func() (*goquery.Document, string) { return viewtest.Render(t, FlowSchemaList(flowSchemaListPage())) },
		"classify": func() (*goquery.Document, string) { return viewtest.Render(t, Classify(classifyPage())) },
	} {
		t.Run(name, func(t *testing.T) {
			doc, raw := c()
			viewtest.AssertCSPSafe(t, doc)
			viewtest.AssertEscaped(t, doc, raw)
			doc.Find("input:not([type=hidden]), textarea, select").Each(func(_ int, s *goquery.Selection) {
				id := s.AttrOr("id", "")
				if id == "" || doc.Find(`label[for="`+id+`"]`).Length() == 0 {
					t.Errorf("input %v has no label", s.Nodes[0].Attr)
				}
			})
		})
	}
}

func TestFlowSchemaList(t *testing.T) {
	doc, _ := viewtest.Render(t, FlowSchemaList(flowSchemaListPage()))
	if href := viewtest.One(t, doc, viewtest.TestID("classify-link")).AttrOr("href", ""); href != "/flowschemas/-/classify" {
		t.Errorf("classify link %q", href)
	}
	heads := doc.Find("thead th")
	if heads.Length() != 6 || heads.First().AttrOr("data-column", "") != "order" || heads.First().AttrOr("aria-sort", "") != "ascending" {
		t.Errorf("headers: %d, first %v", heads.Length(), heads.First().Nodes[0].Attr)
	}
	rows := doc.Find(viewtest.TestID("list-row"))
	if rows.Length() != 2 {
		t.Fatalf("%d rows", rows.Length())
	}
	first := rows.First()
	if first.Children().Length() != 6 || viewtest.Text(first.Children().First()) != "1" {
		t.Errorf("a cell per column, position first: %q", viewtest.Text(first))
	}
	// The name is the row header's link: the first link of the row.
	if a := first.Find("a[href]").First(); a.AttrOr("href", "") != "/flowschemas/exempt" || a.Closest("th").Length() != 1 {
		t.Errorf("first link %v", a.Nodes[0].Attr)
	}
	if a := first.Find(viewtest.TestID("fs-prioritylevel") + " a"); a.AttrOr("href", "") != "/prioritylevels/exempt" {
		t.Error("priority level link")
	}
	if !strings.Contains(viewtest.Text(first.Find("th")), "Mandatory") {
		t.Error("maintenance badge beside the name")
	}
	ghost := rows.Last()
	if ghost.Find(viewtest.TestID("fs-prioritylevel")+" a").Length() != 0 || !strings.Contains(viewtest.Text(ghost), "Missing") {
		t.Error("a missing priority level is not linked and is flagged")
	}
	viewtest.One(t, doc, viewtest.TestID("banner-builtin-exempt"))
	viewtest.One(t, doc, "form#filter-form")

	frag, raw := viewtest.Render(t, FlowSchemaTable(flowSchemaListPage()))
	if strings.Contains(raw, "<html") || frag.Find("body").Children().AttrOr("id", "") != "list-table" {
		t.Error("the fragment is #list-table only")
	}
}

func TestClassify(t *testing.T) {
	doc, _ := viewtest.Render(t, Classify(classifyPage()))
	form := viewtest.One(t, doc, viewtest.TestID("classify-form"))
	if form.AttrOr("method", "") != "get" || form.AttrOr("action", "") != "/flowschemas/-/classify" {
		t.Errorf("form %v", form.Nodes[0].Attr)
	}
	if doc.Find(`input[name="exact"][checked]`).Length() != 1 || doc.Find(`input[name="kind"][value="resource"][checked]`).Length() != 1 {
		t.Error("checkbox and radio keep their state")
	}
	if got := viewtest.One(t, doc, viewtest.TestID("classify-resource")).AttrOr("value", ""); got != "pods" {
		t.Errorf("resource input keeps %q", got)
	}
	path := viewtest.One(t, doc, viewtest.TestID("classify-path"))
	if path.AttrOr("aria-invalid", "") != "true" || path.AttrOr("aria-describedby", "") != "classify-path-error" ||
		viewtest.Text(viewtest.One(t, doc, "#classify-path-error")) != "Give a URL path" {
		t.Error("the field error sits beside its field")
	}
	if got := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("result-flowschema-name"))); got != "global-default" {
		t.Errorf("result flow schema %q", got)
	}
	if got := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("result-distinguisher-value"))); got != "(empty)" {
		t.Errorf("empty distinguisher shown as %q", got)
	}
	steps := doc.Find(viewtest.TestID("trace-step"))
	if steps.Length() != 2 || steps.First().AttrOr("data-flowschema", "") != "exempt" || !strings.Contains(viewtest.Text(steps.First()), "no subject matches") {
		t.Errorf("trace: %d steps", steps.Length())
	}
	if doc.Find(viewtest.TestID("classify-example")).AttrOr("href", "") != "/flowschemas/-/classify?user=n" {
		t.Error("example link")
	}

	p := classifyPage()
	p.Result = nil
	doc, _ = viewtest.Render(t, Classify(p))
	viewtest.One(t, doc, viewtest.TestID("classify-empty"))
}
