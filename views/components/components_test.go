package components

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/clusterdesk/clusterdesk/views/internal/viewtest"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Signer name":        "signer-name",
		"  UID ":             "uid",
		"spec.usages[0]":     "spec-usages-0",
		"Requested duration": "requested-duration",
		"":                   "",
		"---":                "",
		"Ünïcode Läbel":      "ünïcode-läbel",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEveryToneHasClassesIconAndWords(t *testing.T) {
	tones := []model.Tone{model.ToneNeutral, model.ToneOK, model.TonePending, model.ToneWarning, model.ToneError, model.ToneUnknown}
	seen := map[string]model.Tone{}
	for _, tone := range tones {
		if BadgeClass(tone) == "" || BannerClass(tone) == "" || ToneTextClass(tone) == "" {
			t.Errorf("tone %q lacks classes", tone)
		}
		doc, _ := viewtest.Render(t, ToneIcon(tone))
		icon := doc.Find("svg").AttrOr("data-icon", "")
		if icon != string(tone) {
			t.Errorf("ToneIcon(%q) data-icon = %q", tone, icon)
		}
		inner, _ := doc.Find("svg").Html()
		if other, dup := seen[inner]; dup {
			t.Errorf("tones %q and %q share one icon shape", tone, other)
		}
		seen[inner] = tone
	}
	if NormalizeTone("bogus") != model.ToneNeutral || BadgeClass("") != BadgeClass(model.ToneNeutral) {
		t.Error("unknown tones must fall back to neutral")
	}
}

func TestBadge(t *testing.T) {
	doc, raw := viewtest.Render(t, Badge(model.Badge{Text: "Denied " + viewtest.XSS, Tone: model.ToneError, Hint: "denied by admin"}))
	b := viewtest.One(t, doc, ".badge")
	if b.AttrOr("data-tone", "") != "error" || b.AttrOr("title", "") != "denied by admin" {
		t.Errorf("badge attributes: %s", raw)
	}
	if b.Find("svg").Length() != 1 {
		t.Error("a badge carries an icon shape, not colour alone")
	}
	if !strings.Contains(b.AttrOr("class", ""), "text-error-fg") {
		t.Errorf("tone classes missing: %q", b.AttrOr("class", ""))
	}
	viewtest.AssertEscaped(t, doc, raw)

	doc, _ = viewtest.Render(t, Badge(model.Badge{Text: "Synced"}))
	if _, has := doc.Find(".badge").Attr("title"); has {
		t.Error("no hint, no title attribute")
	}
}

func TestBannerRoleAndTestID(t *testing.T) {
	for _, tc := range []struct {
		b      model.Banner
		role   string
		testID string
	}{
		{model.Banner{Tone: model.ToneError, Title: "Forbidden", TestID: "banner-forbidden"}, "alert", "banner-forbidden"},
		{model.Banner{Tone: model.ToneWarning, Title: "Stale"}, "status", "banner-warning"},
		{model.Banner{Tone: model.ToneOK, Message: "Approved"}, "status", "banner-ok"},
	} {
		doc, _ := viewtest.Render(t, Banner(tc.b))
		el := viewtest.One(t, doc, viewtest.TestID(tc.testID))
		if got := el.AttrOr("role", ""); got != tc.role {
			t.Errorf("%+v: role = %q, want %q", tc.b, got, tc.role)
		}
		if !strings.HasPrefix(viewtest.Text(el), ToneLabel(tc.b.Tone)+":") {
			t.Errorf("%+v: the tone must be spoken, got %q", tc.b, viewtest.Text(el))
		}
	}
}

func TestDataTable(t *testing.T) {
	cols := []model.Column{
		{Key: "name", Label: "Name", Sortable: true, SortHref: "/csrs?sort=name&dir=desc", Sorted: "asc"},
		{Key: "age", Label: "Age", Sortable: true, SortHref: "/csrs?sort=age"},
		{Key: "signer", Label: "Signer"},
	}
	rows := []model.Row{
		{ID: "row-a", Name: "a", Href: "/csrs/a", Cells: []model.Cell{{Text: "a", Mono: true}, {Text: "2m", Title: "2026-01-01T00:00:00Z"}, {Text: "x"}}},
		{ID: "row-b", Name: "b", Cells: []model.Cell{{Text: "b"}, {Text: "1h"}, {Badges: []model.Badge{{Text: "Pending", Tone: model.TonePending}}}}},
		{ID: "row-c", Name: "c", Href: "/csrs/c"},
	}
	doc, _ := viewtest.Render(t, DataTable(cols, rows, "#list-table"))

	if n := doc.Find(viewtest.TestID("list-row")).Length(); n != 3 {
		t.Fatalf("rows = %d, want 3", n)
	}
	if doc.Find("thead th[scope=col]").Length() != 3 {
		t.Error("every column header needs scope=col")
	}
	name := viewtest.One(t, doc, `th[data-column="name"]`)
	if name.AttrOr("aria-sort", "") != "ascending" {
		t.Errorf("aria-sort on the sorted column = %q", name.AttrOr("aria-sort", ""))
	}
	if _, has := doc.Find(`th[data-column="age"]`).Attr("aria-sort"); has {
		t.Error("only the sorted column carries aria-sort")
	}
	link := name.Find("a")
	if link.AttrOr("href", "") != "/csrs?sort=name&dir=desc" || link.AttrOr("hx-get", "") != "/csrs?sort=name&dir=desc" || link.AttrOr("hx-target", "") != "#list-table" || link.AttrOr("hx-push-url", "") != "true" {
		t.Errorf("sort link: %v", link.Nodes[0].Attr)
	}
	if doc.Find(`th[data-column="signer"] a`).Length() != 0 {
		t.Error("an unsortable column has no link")
	}
	if got := doc.Find("#row-a th[scope=row] a").AttrOr("href", ""); got != "/csrs/a" {
		t.Errorf("name link = %q", got)
	}
	if doc.Find("#row-b th a").Length() != 0 || viewtest.Text(doc.Find("#row-b th")) != "b" {
		t.Error("a row without Href shows its name without a link")
	}
	if viewtest.Text(doc.Find("#row-c th")) != "c" {
		t.Error("a row without cells still shows its name")
	}
	if doc.Find("#row-a td").First().AttrOr("title", "") != "2026-01-01T00:00:00Z" {
		t.Error("cell title missing")
	}
	if doc.Find("#row-b .badge").Length() != 1 {
		t.Error("badge cell missing its badge")
	}

	plain, _ := viewtest.Render(t, DataTable(cols, rows, ""))
	if _, has := plain.Find("th a").Attr("hx-get"); has {
		t.Error("without a swap target sort links are plain")
	}
}

func TestFilterFormWorksWithAndWithoutJS(t *testing.T) {
	p := model.ListPage{Title: "CSRs", Action: "/csrs", Query: `a"b`, Sort: "age", Desc: true}
	doc, _ := viewtest.Render(t, FilterForm(p))
	form := viewtest.One(t, doc, "form#filter-form")
	for attr, want := range map[string]string{
		"method": "get", "action": "/csrs", "role": "search",
		"hx-get": "/csrs", "hx-target": "#list-table", "hx-push-url": "true", "hx-swap": "outerHTML",
	} {
		if got := form.AttrOr(attr, ""); got != want {
			t.Errorf("form %s = %q, want %q", attr, got, want)
		}
	}
	if !strings.Contains(form.AttrOr("hx-trigger", ""), "delay:") {
		t.Error("typing must be debounced")
	}
	input := viewtest.One(t, doc, viewtest.TestID("filter"))
	if input.AttrOr("name", "") != "q" || input.AttrOr("value", "") != `a"b` {
		t.Errorf("filter input: %v", input.Nodes[0].Attr)
	}
	id := input.AttrOr("id", "")
	if doc.Find(`label[for="`+id+`"]`).Length() != 1 {
		t.Error("the filter input needs a label")
	}

	inputs, _ := viewtest.Render(t, SortInputs(p))
	got := map[string]string{}
	inputs.Find(`input[type=hidden][form="filter-form"]`).Each(func(_ int, s *goquery.Selection) {
		got[s.AttrOr("name", "")] = s.AttrOr("value", "")
	})
	if got["sort"] != "age" || got["dir"] != "desc" {
		t.Errorf("sort inputs = %v", got)
	}
	none, _ := viewtest.Render(t, SortInputs(model.ListPage{}))
	if none.Find("input").Length() != 0 {
		t.Error("no sort, no hidden inputs")
	}
}

func TestKeyValue(t *testing.T) {
	doc, raw := viewtest.Render(t, KeyValue([]model.Field{
		{Label: "Signer name", Value: "kubernetes.io/x", Mono: true},
		{Label: "Requestor", Value: viewtest.XSS},
		{Label: "Usages", Badges: []model.Badge{{Text: "client auth"}}},
		{Label: "SANs"},
		{Label: "Expiration", Value: "24h", Hint: "capped by the signer"},
	}))
	if v := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("field-signer-name")).Find("dd")); v != "kubernetes.io/x" {
		t.Errorf("signer value = %q", v)
	}
	if viewtest.One(t, doc, viewtest.TestID("field-usages")).Find(".badge").Length() != 1 {
		t.Error("badges in a field")
	}
	if v := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("field-sans")).Find("dd")); v != "—" {
		t.Errorf("empty value = %q, want a dash", v)
	}
	if !strings.Contains(viewtest.Text(viewtest.One(t, doc, viewtest.TestID("field-expiration"))), "capped by the signer") {
		t.Error("hint not shown")
	}
	viewtest.AssertEscaped(t, doc, raw)
}

func TestConditionsTable(t *testing.T) {
	doc, _ := viewtest.Render(t, ConditionsTable([]model.Condition{
		{Type: "Approved", Status: "True", Tone: model.ToneOK, Reason: "KubectlApprove", Age: "1m", Time: "2026-01-01T00:00:00Z"},
		{Type: "Failed", Status: "False", Tone: model.ToneNeutral},
	}))
	c := viewtest.One(t, doc, viewtest.TestID("conditions"))
	if n := c.Find(viewtest.TestID("condition")).Length(); n != 2 {
		t.Fatalf("conditions = %d", n)
	}
	approved := c.Find(`[data-type="Approved"]`)
	if approved.Find(`.badge[data-tone="ok"]`).Length() != 1 || approved.Find(`time[datetime="2026-01-01T00:00:00Z"]`).Length() != 1 {
		t.Error("Approved row lacks its badge or time")
	}
	empty, _ := viewtest.Render(t, ConditionsTable(nil))
	if !strings.Contains(empty.Text(), "No conditions") {
		t.Error("empty conditions need a message")
	}
}

func TestCodeBlock(t *testing.T) {
	doc, raw := viewtest.Render(t, CodeBlock("yaml", "YAML", "a: 1\nb: "+viewtest.XSS+"\n"))
	pre := viewtest.One(t, doc, viewtest.TestID("yaml"))
	if pre.Text() != "a: 1\nb: "+viewtest.XSS+"\n" {
		t.Errorf("code text altered: %q", pre.Text())
	}
	btn := viewtest.One(t, doc, viewtest.TestID("yaml-copy"))
	target := btn.AttrOr("data-copy-target", "")
	if target == "" || doc.Find(target).Length() != 1 {
		t.Errorf("copy target %q does not resolve", target)
	}
	if _, hidden := btn.Attr("hidden"); !hidden {
		t.Error("the copy button stays hidden until app.js reveals it")
	}
	viewtest.AssertEscaped(t, doc, raw)
}

func TestActionForm(t *testing.T) {
	doc, _ := viewtest.Render(t, ActionForm(model.Action{Label: "Deny", URL: "/csrs/a/deny", Tone: model.ToneError, TestID: "deny", Confirm: "Deny a?", WithReason: true}, "tok"))
	form := viewtest.One(t, doc, "form")
	if form.AttrOr("method", "") != "post" || form.AttrOr("action", "") != "/csrs/a/deny" || form.AttrOr("data-confirm", "") != "Deny a?" {
		t.Errorf("form attributes: %v", form.Nodes[0].Attr)
	}
	if form.Find(`input[type=hidden][name=_csrf]`).AttrOr("value", "") != "tok" {
		t.Error("csrf token missing")
	}
	msg := viewtest.One(t, doc, `textarea[name=message]`)
	if doc.Find(`label[for="`+msg.AttrOr("id", "")+`"]`).Length() != 1 {
		t.Error("the message box needs a label")
	}
	btn := viewtest.One(t, doc, viewtest.TestID("action-deny"))
	if btn.AttrOr("type", "") != "submit" || !strings.Contains(btn.AttrOr("class", ""), "btn-danger") {
		t.Errorf("button: %v", btn.Nodes[0].Attr)
	}

	doc, _ = viewtest.Render(t, ActionForm(model.Action{Label: "Approve", URL: "/csrs/a/approve", Tone: model.ToneOK, TestID: "approve"}, "tok"))
	if doc.Find("textarea").Length() != 0 {
		t.Error("no reason, no textarea")
	}
	if _, has := doc.Find("form").Attr("data-confirm"); has {
		t.Error("no question, no data-confirm")
	}
}

func TestEmptyState(t *testing.T) {
	doc, _ := viewtest.Render(t, EmptyState("list-empty", "No CSRs", "Nothing yet."))
	ps := viewtest.One(t, doc, viewtest.TestID("list-empty")).Find("p")
	if ps.Length() != 2 || ps.First().Text() != "No CSRs" || ps.Last().Text() != "Nothing yet." {
		t.Errorf("empty state paragraphs = %q", ps.Text())
	}
}

func TestComponentsAreCSPSafe(t *testing.T) {
	p := viewtest.ListPage()
	d := viewtest.DetailPage()
	for name, c := range map[string]templ.Component{
		"filter":     FilterForm(p),
		"table":      DataTable(p.Columns, p.Rows, "#list-table"),
		"keyvalue":   KeyValue(d.Fields),
		"conditions": ConditionsTable(d.Conditions),
		"code":       CodeBlock("yaml", "YAML", d.YAML),
		"action":     ActionForm(d.Actions[1], "tok"),
		"banners":    Banners(d.Problems),
	} {
		t.Run(name, func(t *testing.T) {
			doc, _ := viewtest.Render(t, c)
			viewtest.AssertCSPSafe(t, doc)
		})
	}
}

func TestDataTableHidesLowPriorityColumnsIntoTheNameCell(t *testing.T) {
	cols := []model.Column{{Key: "name", Label: "Name"}, {Key: "age", Label: "Age", Priority: model.SecondaryColumn},
		{Key: "scope", Label: "Scope", Priority: model.TertiaryColumn}, {Key: "kind", Label: "Kind"}}
	long := strings.Repeat("x", 253)
	rows := []model.Row{{ID: "row-x", Name: long, Href: "/x/" + long, Cells: []model.Cell{
		{Text: long, Mono: true},
		{Text: "3d", Priority: model.SecondaryColumn, Label: "Age"},
		{Text: "Cluster", Priority: model.TertiaryColumn, Label: "Scope"},
		{Text: "Thing"},
	}}}
	doc, _ := viewtest.Render(t, DataTable(cols, rows, ""))
	if !doc.Find(`[data-testid="data-table"]`).HasClass("@container") {
		t.Error("the table's panel is not the container its columns query")
	}
	for key, class := range map[string]string{"age": "@max-4xl:hidden", "scope": "@max-5xl:hidden"} {
		if !doc.Find(`thead th[data-column="` + key + `"]`).HasClass(class) {
			t.Errorf("header %s lacks %s", key, class)
		}
	}
	tds := doc.Find("tbody td")
	if !tds.Eq(0).HasClass("@max-4xl:hidden") || !tds.Eq(1).HasClass("@max-5xl:hidden") || tds.Eq(2).HasClass("@max-4xl:hidden") {
		t.Error("cells do not hide with their columns")
	}
	facts := doc.Find(`th[scope=row] [data-testid="row-fact"]`)
	if facts.Length() != 2 || !facts.Eq(0).HasClass("@4xl:hidden") || !facts.Eq(1).HasClass("@5xl:hidden") ||
		!strings.Contains(facts.Eq(0).Text(), "Age:") || !strings.Contains(facts.Eq(0).Text(), "3d") {
		t.Errorf("second line: %d facts %q", facts.Length(), facts.Text())
	}
	th := doc.Find("th[scope=row]")
	if th.AttrOr("title", "") != long || !th.Find(`[data-testid="row-name"]`).HasClass("line-clamp-2") {
		t.Error("a long name is not cut short with the whole name in the title")
	}
}
