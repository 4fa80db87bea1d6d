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
