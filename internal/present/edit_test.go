package present

import (
	"slices"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// TestFieldTree lays out a field tree read from an OpenAPI v3 document
// (edit.FieldTree) for the docs panel.
func TestFieldTree(t *testing.T) {
	doc := []byte(`{"components":{"schemas":{
	  "x.Widget": {"type":"object","description":"A widget.",
	    "x-kubernetes-group-version-kind":[{"group":"example.com","version":"v1","kind":"Widget"}],
	    "required":["spec"],
	    "properties":{
	      "spec":{"description":"Its spec, said by Widget.","default":{},"allOf":[{"$ref":"#/components/schemas/x.Spec"}]},
	      "labels":{"type":"object","additionalProperties":{"type":"string","default":""}}
	    }},
	  "x.Spec": {"type":"object","description":"Spec's own words.","properties":{
	      "size":{"type":"integer","format":"int32","description":"How big: *at most* 10.","enum":[1,2]},
	      "parts":{"type":"array","items":{"allOf":[{"$ref":"#/components/schemas/x.Spec"}]}}
	  }}}}}`)
	root, err := edit.FieldTree(doc, "example.com", "v1", "Widget")
	if err != nil {
		t.Fatal(err)
	}
	tree := DocTree(root)
	find := func(path string) *model.SchemaNode {
		var walk func([]model.SchemaNode) *model.SchemaNode
		walk = func(ns []model.SchemaNode) *model.SchemaNode {
			for i := range ns {
				if ns[i].Path == path {
					return &ns[i]
				}
				if f := walk(ns[i].Children); f != nil {
					return f
				}
			}
			return nil
		}
		return walk(tree)
	}
	spec := find("spec")
	if spec == nil || !spec.Required || spec.Type != "object" || !strings.Contains(spec.DescriptionHTML, "said by Widget") {
		t.Fatalf("spec = %+v", spec)
	}
	size := find("spec.size")
	if size == nil || size.Format != "int32" || !strings.Contains(size.DescriptionHTML, "<em>at most</em>") || len(size.Enum) != 2 {
		t.Fatalf("spec.size = %+v", size)
	}
	// The recursive reference stops after one level, saying so.
	parts := find("spec.parts[]")
	if parts == nil || len(parts.Children) != 0 || !strings.Contains(parts.DescriptionHTML, "enclosing field") {
		t.Fatalf("spec.parts[] = %+v", parts)
	}
	if find("labels{}") == nil {
		t.Error("map values have no node")
	}
	if _, err := edit.FieldTree(doc, "example.com", "v2", "Widget"); err == nil {
		t.Error("a kind the document lacks was found")
	}
}

// TestEditViews: the editor's explanations and diffs reach the page whole.
func TestEditViews(t *testing.T) {
	d := Diff(edit.Diff("T", "old", "new", "a: 1\nb: 2\n", "a: 1\nb: 3\n"))
	want := []model.DiffLine{
		{Kind: model.DiffHunk, Text: "@@ -1,2 +1,2 @@"},
		{Kind: model.DiffContext, Old: "1", New: "1", Text: "a: 1"},
		{Kind: model.DiffRemoved, Old: "2", Text: "b: 2"},
		{Kind: model.DiffAdded, New: "2", Text: "b: 3"},
	}
	if d.Title != "T" || d.From != "old" || d.To != "new" || d.Added != 1 || d.Removed != 1 || !slices.Equal(d.Lines, want) {
		t.Errorf("Diff = %+v", d)
	}
	f := edit.Failure{Title: "t", Message: "m", Local: true, Line: 2, Causes: []edit.Cause{{Field: "spec.x", Message: "bad", Line: 2}}}
	if e := EditError(f); e.Title != "t" || e.Message != "m" || !e.Local || e.Line != 2 || !slices.Equal(e.Causes, []model.Cause{{Field: "spec.x", Message: "bad", Line: 2}}) {
		t.Errorf("EditError = %+v", e)
	}
	m := ManagerConflicts([]edit.ManagerConflict{{Manager: "helm", Fields: f.Causes}})
	if len(m) != 1 || m[0].Manager != "helm" || !slices.Equal(m[0].Fields, []model.Cause{{Field: "spec.x", Message: "bad", Line: 2}}) {
		t.Errorf("ManagerConflicts = %+v", m)
	}
}
