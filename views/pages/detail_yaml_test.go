package pages

import (
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/views/internal/viewtest"
)

func TestDetailYAMLInlineOrOnDemand(t *testing.T) {
	p := viewtest.DetailPage()
	p.YAML, p.YAMLNote = "kind: Thing\n", "the cache keeps less"
	doc, _ := viewtest.Render(t, Detail(p))
	if !strings.Contains(viewtest.Text(viewtest.One(t, doc, viewtest.TestID("yaml"))), "kind: Thing") ||
		viewtest.Text(viewtest.One(t, doc, viewtest.TestID("yaml-note"))) != "the cache keeps less" {
		t.Error("a small object's YAML is inline, with the note")
	}
	if doc.Find(viewtest.TestID("yaml-deferred")).Length() != 0 {
		t.Error("no disclosure for an inline YAML")
	}

	p.YAML, p.YAMLNote, p.YAMLHref, p.YAMLSize = "", "", "/crds/big.example.com/yaml", "a 1.2 MiB object"
	doc, _ = viewtest.Render(t, Detail(p))
	viewtest.AssertCSPSafe(t, doc)
	if doc.Find(viewtest.TestID("yaml")).Length() != 0 {
		t.Error("a large object's YAML is not in the page")
	}
	d := viewtest.One(t, doc, "details[hx-get]")
	link := viewtest.One(t, doc, viewtest.TestID("yaml-link"))
	if d.AttrOr("hx-get", "") != p.YAMLHref || d.AttrOr("hx-trigger", "") != "toggle once" || link.AttrOr("href", "") != p.YAMLHref {
		t.Errorf("disclosure %v, link %v", d.Nodes[0].Attr, link.Nodes[0].Attr)
	}
	if !strings.Contains(viewtest.Text(viewtest.One(t, doc, viewtest.TestID("yaml-summary"))), "1.2 MiB") {
		t.Error("the summary says the size")
	}
	// The fragment the disclosure loads.
	doc, _ = viewtest.Render(t, YAMLFragment("kind: Big\n", "stripped"))
	if !strings.Contains(viewtest.Text(viewtest.One(t, doc, viewtest.TestID("yaml"))), "kind: Big") || viewtest.Text(viewtest.One(t, doc, viewtest.TestID("yaml-note"))) != "stripped" {
		t.Error("fragment")
	}
}
