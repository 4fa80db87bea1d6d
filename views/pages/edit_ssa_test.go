package pages

import (
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/views/internal/viewtest"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// TestEditServerSideApplyConflict: the write mode is chosen on the form, and a
// server-side apply conflict names each manager with its fields, offering
// force only together with its confirmation box; untrusted text is escaped.
func TestEditServerSideApplyConflict(t *testing.T) {
	p := editPage()
	p.Conflict, p.Preview, p.Problems = nil, nil, nil
	p.Mode, p.MaxBytes = model.WriteApply, 6<<20
	p.ApplyConflicts = []model.ManagerConflict{
		{Manager: "kubectl-" + viewtest.XSS, Fields: []model.Cause{{Field: ".metadata.labels.team", Line: 5}, {Field: ".spec.x"}}},
		{Manager: "helm", Fields: []model.Cause{{Field: ".spec.y", Line: 9}}},
	}
	doc, raw := viewtest.Render(t, Edit(p))
	viewtest.AssertCSPSafe(t, doc)
	viewtest.AssertEscaped(t, doc, raw)

	form := viewtest.One(t, doc, viewtest.TestID("editor-form"))
	if form.AttrOr("enctype", "") != "multipart/form-data" || form.AttrOr("data-max-bytes", "") != "6291456" {
		t.Errorf("form enctype %q, data-max-bytes %q", form.AttrOr("enctype", ""), form.AttrOr("data-max-bytes", ""))
	}
	if _, ok := viewtest.One(t, doc, viewtest.TestID("editor-write-apply")).Attr("checked"); !ok {
		t.Error("server-side apply is not the checked mode")
	}
	if _, ok := viewtest.One(t, doc, viewtest.TestID("editor-write-update")).Attr("checked"); ok {
		t.Error("update is checked too")
	}
	managers := doc.Find(`[data-testid="apply-conflict-manager"]`)
	if managers.Length() != 2 || managers.Eq(1).AttrOr("data-manager", "") != "helm" {
		t.Fatalf("%d managers", managers.Length())
	}
	fields := managers.First().Find(`[data-testid="apply-conflict-field"]`)
	if fields.Length() != 2 || !strings.Contains(fields.First().Text(), ".metadata.labels.team") ||
		fields.First().Find("[data-line]").AttrOr("data-line", "") != "5" || fields.Eq(1).Find("[data-line]").Length() != 0 {
		t.Errorf("fields of the first manager: %q", fields.Text())
	}
	confirm := viewtest.One(t, doc, viewtest.TestID("apply-force-confirm"))
	force := viewtest.One(t, doc, viewtest.TestID("apply-force"))
	if confirm.AttrOr("name", "") != "forceConfirm" || force.AttrOr("name", "") != "force" || force.AttrOr("value", "") != "1" ||
		force.AttrOr("formaction", "") != p.ApplyURL {
		t.Errorf("force controls: confirm %q, force %q=%q → %q", confirm.AttrOr("name", ""), force.AttrOr("name", ""), force.AttrOr("value", ""), force.AttrOr("formaction", ""))
	}
	if doc.Find(`[data-testid="editor-hint"]`).Length() != 0 {
		t.Error("the empty-results hint shows beside a conflict")
	}

	// Creating: no write mode (a create is a create).
	p = editPage()
	p.Create, p.Name = true, ""
	doc, _ = viewtest.Render(t, Edit(p))
	if doc.Find(`[data-testid="editor-write-mode"]`).Length() != 0 {
		t.Error("the create page offers a write mode")
	}
}

func TestInstancesPage(t *testing.T) {
	p := model.InstancesPage{
		Chrome: viewtest.Chrome(false), CRD: "gadgets.example.com", CRDHref: "/crds/gadgets.example.com", Kind: "Gadget",
		Resource: "gadgets.example.com/v1", Namespaced: true, Count: "3", Limit: 2,
		Columns: []model.Column{{Key: "Name", Label: "Name"}, {Key: "Size", Label: viewtest.XSS}},
		Rows: []model.Row{{Name: "g1", Href: "/crds/gadgets.example.com/instances/default/g1",
			Cells: []model.Cell{{Text: "g1"}, {Text: viewtest.XSS}}}},
		NextHref: "/crds/gadgets.example.com/instances?continue=abc&limit=2", NewHref: "/crds/gadgets.example.com/instances/new",
	}
	doc, raw := viewtest.Render(t, Instances(p))
	viewtest.AssertCSPSafe(t, doc)
	viewtest.AssertEscaped(t, doc, raw)
	if href := viewtest.One(t, doc, viewtest.TestID("instances-next")).AttrOr("href", ""); href != p.NextHref {
		t.Errorf("next %q", href)
	}
	if doc.Find(`[data-testid="instances-first"]`).Length() != 0 {
		t.Error("a first-page link on the first page")
	}
	if href := doc.Find(`[data-testid="instances-table"] [data-testid="list-row"] a`).AttrOr("href", ""); href != p.Rows[0].Href {
		t.Errorf("row link %q", href)
	}
	viewtest.One(t, doc, viewtest.TestID("instances-filter"))
	viewtest.One(t, doc, viewtest.TestID("new-link"))

	p.Rows, p.NextHref, p.NewHref = nil, "", ""
	p.Problem = &model.Banner{Tone: model.ToneError, Title: "Forbidden", Message: viewtest.XSS, TestID: "instances-problem"}
	doc, raw = viewtest.Render(t, Instances(p))
	viewtest.AssertEscaped(t, doc, raw)
	viewtest.One(t, doc, viewtest.TestID("instances-problem"))
	if doc.Find(`[data-testid="new-link"], [data-testid="instances-empty"]`).Length() != 0 {
		t.Error("a New link in read-only mode, or the empty state beside the problem")
	}
}
