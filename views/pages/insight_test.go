package pages

import (
	"testing"

	"github.com/clusterdesk/clusterdesk/views/internal/viewtest"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func insightPage() model.DetailPage {
	p := viewtest.DetailPage()
	f := model.Finding{Code: "fail-kube-system", Tone: model.ToneError, Title: "Fail policy", Message: viewtest.XSS}
	p.Insights = []model.Insight{
		{Title: "Webhooks", TestID: "webhooks", Intro: viewtest.XSS, Table: &model.RichTable{
			Columns: []string{"Webhook", "Rules", "Findings"},
			Rows: []model.RichRow{{TestID: "webhook-row", Cells: []model.Rich{
				{Text: "a.example.com", Href: "#webhook-a.example.com", Mono: true},
				{Lines: []string{"CREATE · core / v1 / pods", viewtest.XSS}},
				{Badges: []model.Badge{{Text: f.Title, Tone: f.Tone, Hint: f.Message}}},
			}}},
		}},
		{Title: "Webhook details", TestID: "webhook-details", Cards: []model.Insight{{
			Title: "a.example.com", TestID: "webhook-a.example.com", Open: true, Findings: []model.Finding{f},
			Fields: []model.RichField{{Label: "Match conditions", Hint: "CEL",
				Value: model.Rich{Code: []model.Snippet{{Label: "x", Code: "request.name == '" + viewtest.XSS + "'"}}}}},
		}, {Title: "closed", TestID: "closed"}}},
	}
	return p
}

func TestInsightsRenderSafely(t *testing.T) {
	doc, raw := viewtest.Render(t, Detail(insightPage()))
	viewtest.AssertCSPSafe(t, doc)
	viewtest.AssertEscaped(t, doc, raw)
	viewtest.One(t, doc, viewtest.TestID("webhooks")+" "+viewtest.TestID("webhook-row"))
	card := viewtest.One(t, doc, "details"+viewtest.TestID("webhook-a.example.com"))
	if _, open := card.Attr("open"); !open {
		t.Error("card with Open should render open")
	}
	if _, open := viewtest.One(t, doc, "details"+viewtest.TestID("closed")).Attr("open"); open {
		t.Error("card without Open should render closed")
	}
	viewtest.One(t, doc, viewtest.TestID("webhook-a.example.com")+" "+viewtest.TestID("finding-fail-kube-system"))
	viewtest.One(t, doc, viewtest.TestID("webhook-a.example.com")+" "+viewtest.TestID("finding-badge-fail-kube-system"))
	if got := viewtest.One(t, doc, viewtest.TestID("webhook-a.example.com")+" pre code").Text(); got != "request.name == '"+viewtest.XSS+"'" {
		t.Errorf("CEL code = %q", got)
	}
	if href := viewtest.One(t, doc, viewtest.TestID("webhook-row")+" a").AttrOr("href", ""); href != "#webhook-a.example.com" {
		t.Errorf("row link %q", href)
	}
}

func TestSchemaAndInterceptPagesRenderSafely(t *testing.T) {
	leaf := model.SchemaNode{Name: viewtest.XSS, Path: "spec." + viewtest.XSS, Type: "string", Required: true,
		DescriptionHTML: "<p>Safe <code>html</code></p>", Enum: []string{`"` + viewtest.XSS + `"`}, Default: `"a"`, Pattern: viewtest.XSS,
		Rules: []model.SchemaRule{{Rule: "self.size() < 3 && '" + viewtest.XSS + "'", Message: viewtest.XSS}}}
	cut := model.SchemaNode{Name: "deep", Path: "spec.deep", Type: "object", FocusHref: "/crds/x/schema/v1?path=spec.deep", Hidden: 42}
	schema := model.SchemaPage{Chrome: viewtest.Chrome(false), CRD: "x.example.com", Kind: "X", Version: "v1",
		Versions: []model.SchemaVersion{{Name: "v1", Current: true}, {Name: "v2", Href: "/crds/x/schema/v2"}},
		Trail:    []model.Crumb{{Label: "X", Href: "/crds/x/schema/v1"}, {Label: "spec"}}, Note: viewtest.XSS, Fields: 3, Shown: 2,
		Root: model.SchemaNode{Open: true, Children: []model.SchemaNode{{Name: "spec", Path: "spec", Type: "object", Open: true,
			FocusHref: "/crds/x/schema/v1?path=spec", Children: []model.SchemaNode{leaf, cut}}}}}
	doc, raw := viewtest.Render(t, Schema(schema))
	viewtest.AssertCSPSafe(t, doc)
	viewtest.AssertEscaped(t, doc, raw)
	if n := doc.Find(viewtest.TestID("schema-field")).Length(); n != 3 {
		t.Errorf("%d fields rendered, want 3", n)
	}
	if _, open := viewtest.One(t, doc, `[data-path="spec"] > details`).Attr("open"); !open {
		t.Error("an Open field should render open")
	}
	viewtest.One(t, doc, viewtest.TestID("schema-description")+" code")
	if href := viewtest.One(t, doc, viewtest.TestID("schema-hidden")+" a").AttrOr("href", ""); href != cut.FocusHref {
		t.Errorf("hidden fields link %q", href)
	}

	form := model.InterceptPage{Chrome: viewtest.Chrome(false), Operations: []string{"CREATE", "UPDATE"},
		Form:   model.InterceptForm{Operation: "UPDATE", Resource: viewtest.XSS, ObjectLabels: viewtest.XSS},
		Errors: map[string]string{"labels": viewtest.XSS}, Notes: []string{viewtest.XSS},
		Result: &model.Insight{Title: "Webhooks for this request", TestID: "intercept-result", Table: &model.RichTable{Columns: []string{"#"}}}}
	doc, raw = viewtest.Render(t, Intercept(form))
	viewtest.AssertCSPSafe(t, doc)
	viewtest.AssertEscaped(t, doc, raw)
	if v := viewtest.One(t, doc, `select[name="operation"] option[selected]`).AttrOr("value", ""); v != "UPDATE" {
		t.Errorf("selected operation %q", v)
	}
	if viewtest.One(t, doc, `input[name="labels"]`).AttrOr("aria-invalid", "") != "true" {
		t.Error("the field with an error is not marked invalid")
	}
	viewtest.One(t, doc, viewtest.TestID("intercept-result"))
}
