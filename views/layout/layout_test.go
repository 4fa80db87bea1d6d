package layout

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/internal/viewtest"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func chrome() model.Chrome {
	c := viewtest.Chrome(false)
	c.Search = `leader <b>`
	c.Nav = []model.NavItem{
		{Kind: "csrs", Label: "CertificateSigningRequests", Href: "/csrs", Count: "3", Active: true, Shortcut: "g c"},
		{Kind: "flowschemas", Label: "FlowSchemas", Href: "/flowschemas", Shortcut: "g f"},
		{Kind: "prioritylevels", Label: "PriorityLevelConfigurations", Href: "/prioritylevels", Shortcut: "g p"},
		{Kind: "crds", Label: "CustomResourceDefinitions", Href: "/crds", Shortcut: "g r"},
		{Kind: "validatingwebhooks", Label: "ValidatingWebhookConfigurations", Href: "/validatingwebhooks", Shortcut: "g w"},
		{Kind: "csidrivers", Label: "CSIDrivers", Href: "/csidrivers", Shortcut: "g d"},
	}
	return c
}

func TestTopBarSearchThemeAndShortcuts(t *testing.T) {
	doc, _ := viewtest.Render(t, Page(chrome()))
	viewtest.AssertCSPSafe(t, doc)

	form := viewtest.One(t, doc, viewtest.TestID("search-form"))
	if form.AttrOr("method", "") != "get" || form.AttrOr("action", "") != urls.Search || form.AttrOr("role", "") != "search" {
		t.Errorf("the search is a plain GET form to %s with role=search: %v", urls.Search, form.Nodes[0].Attr)
	}
	input := viewtest.One(t, doc, viewtest.TestID("search"))
	if input.AttrOr("name", "") != "q" || input.AttrOr("value", "") != `leader <b>` {
		t.Errorf("search input: %v", input.Nodes[0].Attr)
	}
	if doc.Find(`label[for="`+input.AttrOr("id", "")+`"]`).Length() != 1 {
		t.Error("the search input has no label")
	}

	// Controls that need script are hidden until it runs.
	for _, id := range []string{"theme-toggle", "shortcuts-open"} {
		if _, hidden := viewtest.One(t, doc, viewtest.TestID(id)).Attr("hidden"); !hidden {
			t.Errorf("%s must be hidden without script", id)
		}
	}

	// Every nav link has a distinct "g x" shortcut, and the dialog lists each.
	dialog := viewtest.One(t, doc, "dialog#shortcuts-dialog")
	listed := viewtest.Text(dialog)
	seen := map[string]bool{}
	links := doc.Find(`a[data-shortcut]`)
	if links.Length() != 7 {
		t.Errorf("want the home link and six kinds with a shortcut, got %d", links.Length())
	}
	links.Each(func(_ int, a *goquery.Selection) {
		sc := a.AttrOr("data-shortcut", "")
		if seen[sc] {
			t.Errorf("shortcut %q is used twice", sc)
		}
		seen[sc] = true
		keys := strings.Fields(sc)
		if len(keys) != 2 || keys[0] != "g" {
			t.Errorf("shortcut %q is not g + a key", sc)
		}
	})
	for _, it := range chrome().Nav {
		if !strings.Contains(listed, it.Label) {
			t.Errorf("the dialog does not list %s", it.Label)
		}
	}
	for _, want := range []string{"?", "Ctrl K", "then", "Approve the ticked requests"} {
		if !strings.Contains(listed, want) {
			t.Errorf("the dialog does not mention %q", want)
		}
	}
}
