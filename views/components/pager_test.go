package components

import (
	"testing"

	"github.com/clusterdesk/clusterdesk/views/internal/viewtest"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func TestPager(t *testing.T) {
	doc, html := viewtest.Render(t, Pager(model.Pager{Page: 1, Pages: 1, From: 1, To: 7, Matched: 7}, "#t"))
	if doc.Find(viewtest.TestID("pager")).Length() != 0 || html != "" {
		t.Errorf("one page needs no pager: %q", html)
	}

	p := model.Pager{Page: 3, Pages: 9, From: 201, To: 300, Matched: 850, Prev: "/x?page=2", Next: "/x?page=4", Links: []model.PageLink{
		{Number: 1, Href: "/x"}, {Gap: true}, {Number: 2, Href: "/x?page=2"}, {Number: 3, Href: "/x?page=3", Current: true},
		{Number: 4, Href: "/x?page=4"}, {Gap: true}, {Number: 9, Href: "/x?page=9"},
	}}
	doc, _ = viewtest.Render(t, Pager(p, "#t"))
	viewtest.AssertCSPSafe(t, doc)
	nav := viewtest.One(t, doc, viewtest.TestID("pager"))
	if nav.AttrOr("aria-label", "") != "Pages" || nav.AttrOr("data-page", "") != "3" || nav.AttrOr("data-pages", "") != "9" {
		t.Errorf("nav attributes: %v", nav.Nodes[0].Attr)
	}
	cur := viewtest.One(t, doc, viewtest.TestID("page-current"))
	if viewtest.Text(cur) != "3" || cur.AttrOr("aria-current", "") != "page" || cur.Is("a") {
		t.Errorf("the current page is marked and not a link: %q", viewtest.Text(cur))
	}
	links := doc.Find(viewtest.TestID("page-link"))
	if links.Length() != 4 {
		t.Errorf("%d numbered links, want 4", links.Length())
	}
	for _, id := range []string{"page-prev", "page-next"} {
		a := viewtest.One(t, doc, viewtest.TestID(id))
		if !a.Is("a") || a.AttrOr("href", "") != a.AttrOr("hx-get", "-") || a.AttrOr("hx-target", "") != "#t" || a.AttrOr("hx-push-url", "") != "true" {
			t.Errorf("%s is not a plain link that htmx swaps: %v", id, a.Nodes[0].Attr)
		}
	}

	// On the first page "previous" is not a link.
	p.Prev, p.Page = "", 1
	doc, _ = viewtest.Render(t, Pager(p, "#t"))
	if prev := viewtest.One(t, doc, viewtest.TestID("page-prev")); prev.Is("a") || prev.AttrOr("aria-disabled", "") != "true" {
		t.Error("previous on page 1 should be disabled")
	}
}

func TestPagedCount(t *testing.T) {
	doc, _ := viewtest.Render(t, PagedCount(850, 900, model.Pager{Page: 3, Pages: 9, From: 201, To: 300}))
	if got := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("list-count"))); got != "Showing 850 of 900 · rows 201–300 on page 3 of 9" {
		t.Errorf("count line %q", got)
	}
	doc, _ = viewtest.Render(t, PagedCount(7, 7, model.Pager{Page: 1, Pages: 1, From: 1, To: 7}))
	if got := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("list-count"))); got != "Showing 7 of 7" {
		t.Errorf("one page: %q", got)
	}
}
