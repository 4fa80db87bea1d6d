package pages

import (
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/views/internal/viewtest"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func editPage() model.EditPage {
	return model.EditPage{
		Chrome: viewtest.Chrome(false), KindID: "flowschemas", KindTitle: "FlowSchemas", Kind: "FlowSchema", Name: "demo",
		YAML: "apiVersion: v1\nkind: FlowSchema\n# " + viewtest.XSS + "\n", ResourceVersion: "42", Base: "H4sI",
		ApplyURL: "/flowschemas/demo/apply", PreviewURL: "/flowschemas/demo/preview", RebaseURL: "/flowschemas/demo/rebase",
		CancelURL: "/flowschemas/demo", StatusURL: "/flowschemas/demo/edit?status=1", ApplyLabel: "Apply",
		Problems: []model.EditError{{Title: "Invalid", Message: viewtest.XSS, Line: 3,
			Causes: []model.Cause{{Field: "spec.x", Message: viewtest.XSS, Line: 3}}}},
		Warnings: []string{viewtest.XSS},
		Preview: &model.Diff{Title: "What the API server would store", From: "a", To: "b", Added: 1, Removed: 1, Lines: []model.DiffLine{
			{Kind: model.DiffHunk, Text: "@@ -1 +1 @@"}, {Kind: model.DiffRemoved, Old: "1", Text: "a: " + viewtest.XSS},
			{Kind: model.DiffAdded, New: "1", Text: "a: 2"}, {Kind: model.DiffContext, Old: "2", New: "2", Text: "b: 1"}}},
		Conflict: &model.Conflict{Message: viewtest.XSS, CurrentVersion: "43", Changes: model.Diff{Title: "Changed", Note: "No difference."}},
		Docs: []model.SchemaNode{{Name: "spec", Path: "spec", Type: "object", DescriptionHTML: "<p>safe</p>",
			Children: []model.SchemaNode{{Name: "matchingPrecedence", Path: "spec.matchingPrecedence", Type: "integer"}}}},
	}
}

func TestEditAndDeletePages(t *testing.T) {
	doc, raw := viewtest.Render(t, Edit(editPage()))
	viewtest.AssertCSPSafe(t, doc)
	viewtest.AssertEscaped(t, doc, raw)
	form := viewtest.One(t, doc, viewtest.TestID("editor-form"))
	if form.AttrOr("method", "") != "post" || form.AttrOr("action", "") != "/flowschemas/demo/apply" {
		t.Errorf("form posts to %q", form.AttrOr("action", ""))
	}
	if got := form.Find(`textarea[name="yaml"]`).Text(); !strings.Contains(got, viewtest.XSS) {
		t.Errorf("textarea lost the text: %q", got)
	}
	for name, want := range map[string]string{"_csrf": "csrf-token-123", "resourceVersion": "42", "base": "H4sI"} {
		if got := form.Find(`input[name="`+name+`"]`).AttrOr("value", ""); got != want {
			t.Errorf("hidden %s = %q, want %q", name, got, want)
		}
	}
	if viewtest.One(t, doc, viewtest.TestID("editor-preview")).AttrOr("formaction", "") != "/flowschemas/demo/preview" {
		t.Error("Preview does not post to the preview URL")
	}
	if doc.Find(viewtest.TestID("conflict-rebase")).AttrOr("formaction", "") != "/flowschemas/demo/rebase" {
		t.Error("no rebase button")
	}
	lines := doc.Find(viewtest.TestID("preview-diff") + ` [data-testid="diff-line"]`)
	if lines.Length() != 4 || lines.Eq(1).AttrOr("data-kind", "") != "removed" || !strings.Contains(viewtest.Text(lines.Eq(2)), "+") {
		t.Errorf("diff lines: %d", lines.Length())
	}
	if doc.Find(`[data-testid="editor-problem"] [data-line="3"]`).Length() != 2 {
		t.Error("the problem and its cause should name line 3")
	}
	if doc.Find(`[data-testid="editor-docs"] [data-path="spec.matchingPrecedence"]`).Length() != 1 {
		t.Error("docs panel missing")
	}
	scripts := doc.Find("script")
	if scripts.Length() != 3 || !strings.HasPrefix(scripts.Last().AttrOr("src", ""), "/static/editor.js") {
		t.Errorf("the editor page loads theme.js, app.js and editor.js, got %d scripts", scripts.Length())
	}

	create := editPage()
	create.Name, create.Create, create.ResourceVersion, create.ApplyLabel, create.Conflict = "", true, "", "Create", nil
	doc, _ = viewtest.Render(t, Edit(create))
	if doc.Find(`input[name="resourceVersion"]`).Length() != 0 || viewtest.One(t, doc, viewtest.TestID("editor-apply")).AttrOr("value", "") != "create" {
		t.Error("the create form sends no resourceVersion and op=create")
	}

	del := model.DeletePage{Chrome: viewtest.Chrome(false), Kind: "CustomResourceDefinition", Name: "widgets.example.com", UID: "u-1",
		ActionURL: "/crds/widgets.example.com/delete", CancelURL: "/crds/widgets.example.com", DryRunOK: true,
		Consequences: []string{"Deleting it also deletes all 3 Widget objects " + viewtest.XSS}, Typed: viewtest.XSS}
	doc, raw = viewtest.Render(t, Delete(del))
	viewtest.AssertCSPSafe(t, doc)
	viewtest.AssertEscaped(t, doc, raw)
	if viewtest.One(t, doc, `input[name="uid"]`).AttrOr("value", "") != "u-1" || viewtest.One(t, doc, viewtest.TestID("delete-confirm")).AttrOr("value", "") != viewtest.XSS {
		t.Error("delete form fields")
	}
	del.DryRunOK = false
	doc, _ = viewtest.Render(t, Delete(del))
	if doc.Find(viewtest.TestID("delete-form")).Length() != 0 {
		t.Error("a refused dry run still offers the delete form")
	}
}

func TestDetailOffersEditUnlessReadOnly(t *testing.T) {
	p := viewtest.DetailPage()
	doc, _ := viewtest.Render(t, Detail(p))
	if href := doc.Find(viewtest.TestID("edit-link")).AttrOr("href", ""); !strings.HasSuffix(href, "/edit") || !strings.HasPrefix(href, "/"+p.KindID+"/") {
		t.Errorf("edit link %q", href)
	}
	p.Chrome.ReadOnly = true
	doc, _ = viewtest.Render(t, Detail(p))
	if doc.Find(viewtest.TestID("edit-links")).Length() != 0 {
		t.Error("read-only detail page offers editing")
	}
}
