package pages

import (
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/internal/viewtest"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func homePage() model.HomePage {
	return model.HomePage{
		Chrome: viewtest.Chrome(true),
		Kinds: []model.KindSummary{
			{ID: "csrs", Title: "CertificateSigningRequests", Href: "/csrs", Count: "12", Status: model.Badge{Text: "Synced", Tone: model.ToneOK}, Note: "3 pending"},
			{ID: "webhooks", Title: "ValidatingWebhookConfigurations", Status: model.Badge{Text: "Forbidden", Tone: model.ToneError}, Note: viewtest.XSS},
		},
	}
}

func errorPage() model.ErrorPage {
	return model.ErrorPage{Chrome: viewtest.Chrome(false), Status: 403, Title: "Forbidden", Message: viewtest.XSS, Causes: []string{"spec.signerName: Forbidden", "b"}}
}

// fullPages are every page rendered with sample models.
func fullPages() map[string]templ.Component {
	return map[string]templ.Component{
		"home":           Home(homePage()),
		"list":           List(viewtest.ListPage()),
		"detail":         Detail(viewtest.DetailPage()),
		"error":          Error(errorPage()),
		"login":          Login(model.LoginPage{Title: "Sign in", Message: viewtest.XSS}),
		"ledger":         Ledger(ledgerPage()),
		"ledger history": LedgerHistory(ledgerHistoryPage()),
	}
}

func TestFullPagesAreCSPSafeAndEscaped(t *testing.T) {
	for name, c := range fullPages() {
		t.Run(name, func(t *testing.T) {
			doc, raw := viewtest.Render(t, c)
			viewtest.AssertCSPSafe(t, doc)
			viewtest.AssertEscaped(t, doc, raw)
			if !strings.HasPrefix(raw, "<!doctype html>") && !strings.HasPrefix(raw, "<!DOCTYPE html>") {
				t.Errorf("no doctype: %.40q", raw)
			}
			if doc.Find("html").AttrOr("lang", "") != "en" {
				t.Error("html lang=en missing")
			}
			// theme.js first and blocking (it sets the theme before the first
			// paint), then the deferred app.js.
			scripts := doc.Find("head script")
			if scripts.Length() != 2 || doc.Find("script").Length() != 2 ||
				!strings.HasPrefix(scripts.Eq(0).AttrOr("src", ""), "/static/theme.js") ||
				!strings.HasPrefix(scripts.Eq(1).AttrOr("src", ""), "/static/app.js") {
				t.Errorf("want exactly theme.js and app.js in <head>, got %d scripts", doc.Find("script").Length())
			}
			if _, deferred := scripts.Eq(0).Attr("defer"); deferred {
				t.Error("theme.js must not be deferred")
			}
			if _, deferred := scripts.Eq(1).Attr("defer"); !deferred {
				t.Error("app.js must be deferred")
			}
			if !strings.HasPrefix(doc.Find(`link[rel=stylesheet]`).AttrOr("href", ""), "/static/app.css") {
				t.Error("app.css link missing")
			}
			cfg := doc.Find(`meta[name="htmx-config"]`).AttrOr("content", "")
			for _, want := range []string{`"includeIndicatorStyles":false`, `"allowEval":false`, `"allowScriptTags":false`} {
				if !strings.Contains(cfg, want) {
					t.Errorf("htmx-config lacks %s: %s", want, cfg)
				}
			}
			if doc.Find("main").Length() != 1 {
				t.Error("one <main> landmark")
			}
			doc.Find("input:not([type=hidden]), textarea, select").Each(func(_ int, s *goquery.Selection) {
				id := s.AttrOr("id", "")
				if id == "" || doc.Find(`label[for="`+id+`"]`).Length() == 0 {
					t.Errorf("input %v has no label", s.Nodes[0].Attr)
				}
			})
		})
	}
}

func TestLayoutChrome(t *testing.T) {
	doc, _ := viewtest.Render(t, Home(homePage()))

	if doc.Find("header").Length() != 1 || doc.Find(`nav[aria-label="Resources"]`).Length() != 1 || doc.Find(`nav[aria-label="Breadcrumb"]`).Length() != 1 {
		t.Error("landmarks: header, resource nav and breadcrumb nav")
	}
	if got := doc.Find(`meta[name="csrf-token"]`).AttrOr("content", ""); got != "csrf-token-123" {
		t.Errorf("csrf meta = %q", got)
	}
	viewtest.One(t, doc, viewtest.TestID("readonly-badge"))
	if got := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("user"))); got != "kubernetes-admin "+viewtest.XSS {
		t.Errorf("user = %q", got)
	}
	if got := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("server-version"))); got != "v1.36.3" {
		t.Errorf("version = %q", got)
	}

	logout := viewtest.One(t, doc, viewtest.TestID("logout"))
	if logout.AttrOr("method", "") != "post" || logout.AttrOr("action", "") != urls.Logout {
		t.Errorf("logout form: %v", logout.Nodes[0].Attr)
	}
	if got := logout.Find(`input[type=hidden][name=_csrf]`).AttrOr("value", ""); got != "csrf-token-123" {
		t.Errorf("logout csrf = %q", got)
	}

	current := doc.Find(`nav[aria-label="Resources"] a[aria-current="page"]`)
	if current.Length() != 1 || current.AttrOr("href", "") != "/csrs" {
		t.Errorf("aria-current nav item: %d", current.Length())
	}
	if !strings.Contains(viewtest.Text(current), "3") {
		t.Error("nav count missing")
	}
	crumbs := doc.Find(`nav[aria-label="Breadcrumb"] li`)
	if crumbs.Length() != 2 || crumbs.First().Find("a").AttrOr("href", "") != "/" || crumbs.Last().Find(`[aria-current="page"]`).Length() != 1 {
		t.Error("breadcrumbs: a link, then the current page")
	}
	if viewtest.One(t, doc, viewtest.TestID("banner-unreachable")).AttrOr("role", "") != "alert" {
		t.Error("an error banner is role=alert")
	}
	if viewtest.One(t, doc, viewtest.TestID("banner-stale")).AttrOr("role", "") != "status" {
		t.Error("a warning banner is role=status")
	}

	rw, _ := viewtest.Render(t, List(viewtest.ListPage()))
	if rw.Find(viewtest.TestID("readonly-badge")).Length() != 0 {
		t.Error("no READ-ONLY badge when writes are allowed")
	}
}

func TestHome(t *testing.T) {
	doc, _ := viewtest.Render(t, Home(homePage()))
	csrs := viewtest.One(t, doc, viewtest.TestID("home-kind-csrs"))
	if csrs.AttrOr("href", "") != "/csrs" || viewtest.Text(csrs.Find(viewtest.TestID("kind-count"))) != "12" {
		t.Errorf("csrs card: %q", viewtest.Text(csrs))
	}
	hooks := viewtest.One(t, doc, viewtest.TestID("home-kind-webhooks"))
	if goquery.NodeName(hooks) == "a" {
		t.Error("a kind without Href is not a link")
	}
	if hooks.Find(`.badge[data-tone="error"]`).Length() != 1 {
		t.Error("status badge missing")
	}
}

func TestList(t *testing.T) {
	p := viewtest.ListPage()
	doc, _ := viewtest.Render(t, List(p))

	table := viewtest.One(t, doc, "#list-table")
	if table.AttrOr("data-testid", "") != "list-table" {
		t.Error("list-table test id")
	}
	rows := table.Find(viewtest.TestID("list-row"))
	if rows.Length() != 3 {
		t.Fatalf("rows = %d", rows.Length())
	}
	if rows.First().AttrOr("id", "") != "row-csrs-csr-a" {
		t.Errorf("row id = %q", rows.First().AttrOr("id", ""))
	}
	if got := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("list-count"))); got != "Showing 3 of 12" {
		t.Errorf("count = %q", got)
	}
	if got := doc.Find(`th[aria-sort]`); got.Length() != 1 || got.AttrOr("aria-sort", "") != "descending" || got.AttrOr("data-column", "") != "age" {
		t.Error("aria-sort=descending on Age only")
	}
	filter := viewtest.One(t, doc, viewtest.TestID("filter"))
	if filter.AttrOr("value", "") != "node" {
		t.Error("filter keeps the query")
	}
	// The hidden sort inputs live in the fragment but belong to the form.
	form := viewtest.One(t, doc, "form#filter-form")
	sortIn := doc.Find(`input[name=sort][form="filter-form"]`)
	if sortIn.Length() != 1 || sortIn.AttrOr("value", "") != "age" || doc.Find(`input[name=dir][form="filter-form"]`).AttrOr("value", "") != "desc" {
		t.Error("sort/dir hidden inputs")
	}
	if form.AttrOr("hx-get", "") != "/csrs" || form.AttrOr("hx-target", "") != "#list-table" {
		t.Error("the filter form swaps #list-table")
	}
}

func TestListTableFragment(t *testing.T) {
	doc, raw := viewtest.Render(t, ListTable(viewtest.ListPage()))
	if strings.Contains(strings.ToLower(raw), "<html") || strings.Contains(raw, "<header") || strings.Contains(raw, "<form") {
		t.Errorf("the fragment is only the table: %.80q", raw)
	}
	root := doc.Find("body").Children()
	if root.Length() != 1 || root.AttrOr("id", "") != "list-table" {
		t.Fatalf("the fragment's single root is #list-table")
	}
	if root.Find(viewtest.TestID("list-row")).Length() != 3 || root.Find(viewtest.TestID("list-count")).Length() != 1 {
		t.Error("rows and count in the fragment")
	}
	viewtest.AssertCSPSafe(t, doc)
	viewtest.AssertEscaped(t, doc, raw)
}

func TestListEmptyAndForbidden(t *testing.T) {
	p := viewtest.ListPage()
	p.Rows, p.Shown = nil, 0
	doc, _ := viewtest.Render(t, List(p))
	empty := viewtest.One(t, doc, viewtest.TestID("list-empty"))
	if !strings.Contains(empty.Text(), "node") || !strings.Contains(empty.Text(), "No CSR matches.") {
		t.Errorf("empty state: %q", viewtest.Text(empty))
	}
	if doc.Find("table").Length() != 0 {
		t.Error("no table when empty")
	}
	if got := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("list-count"))); got != "Showing 0 of 12" {
		t.Errorf("count = %q", got)
	}

	p.Forbidden = true
	doc, _ = viewtest.Render(t, List(p))
	viewtest.One(t, doc, viewtest.TestID("list-forbidden"))
	viewtest.One(t, doc, "#list-table")
	if doc.Find(viewtest.TestID("filter")).Length() != 0 || doc.Find("table").Length() != 0 {
		t.Error("forbidden: no filter, no table")
	}
}

func TestDetail(t *testing.T) {
	p := viewtest.DetailPage()
	doc, _ := viewtest.Render(t, Detail(p))

	if got := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("detail-name"))); got != "csr-a" {
		t.Errorf("name = %q", got)
	}
	if doc.Find("h1").Length() != 1 {
		t.Error("one h1")
	}
	status := viewtest.One(t, doc, viewtest.TestID("detail-status"))
	if viewtest.Text(status) != "Pending" || status.Find(`[data-tone="pending"]`).Length() != 1 {
		t.Errorf("status = %q", viewtest.Text(status))
	}
	if viewtest.One(t, doc, viewtest.TestID("banner-invalid-pem")).AttrOr("role", "") != "alert" {
		t.Error("problem banner")
	}
	if got := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("field-signer-name")).Find("dd")); got != "kubernetes.io/kube-apiserver-client" {
		t.Errorf("signer = %q", got)
	}
	viewtest.One(t, doc, viewtest.TestID("field-usages"))
	if subject := viewtest.One(t, doc, viewtest.TestID("section-decoded")).Find(viewtest.TestID("field-subject")); subject.Length() != 1 || !strings.Contains(subject.Text(), "CN=alice") {
		t.Error("section field Subject")
	}
	if n := viewtest.One(t, doc, viewtest.TestID("section-checks")).Find(viewtest.TestID("section-row")).Length(); n != 2 {
		t.Errorf("section rows = %d", n)
	}
	if n := viewtest.One(t, doc, viewtest.TestID("conditions")).Find(viewtest.TestID("condition")).Length(); n != 1 {
		t.Errorf("conditions = %d", n)
	}
	if !strings.HasPrefix(viewtest.One(t, doc, viewtest.TestID("yaml")).Text(), "apiVersion: certificates.k8s.io/v1\n") {
		t.Error("yaml block")
	}
	approve := viewtest.One(t, doc, viewtest.TestID("action-approve"))
	form := approve.Closest("form")
	if form.AttrOr("action", "") != "/csrs/csr-a/approve" || form.Find(`input[name=_csrf]`).AttrOr("value", "") != "csrf-token-123" {
		t.Error("approve form posts with the csrf token")
	}
	if form.Find(`textarea[name=message]`).Length() != 1 {
		t.Error("approve asks for a reason")
	}
	deny := viewtest.One(t, doc, viewtest.TestID("action-deny")).Closest("form")
	if deny.AttrOr("data-confirm", "") != "Deny csr-a?" {
		t.Error("deny asks for confirmation")
	}

	p.Actions, p.Conditions, p.YAML, p.Problems = nil, nil, "", nil
	doc, _ = viewtest.Render(t, Detail(p))
	for _, id := range []string{"actions", "conditions", "yaml", "problems"} {
		if doc.Find(viewtest.TestID(id)).Length() != 0 {
			t.Errorf("%s shown without data", id)
		}
	}
}

func TestError(t *testing.T) {
	doc, _ := viewtest.Render(t, Error(errorPage()))
	if got := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("error-status"))); got != "403 Forbidden" {
		t.Errorf("status = %q", got)
	}
	if viewtest.Text(viewtest.One(t, doc, viewtest.TestID("error-title"))) != "Forbidden" {
		t.Error("title")
	}
	if viewtest.One(t, doc, viewtest.TestID("error-causes")).Find("li").Length() != 2 {
		t.Error("causes")
	}

	bare := model.ErrorPage{Status: 599}
	doc, _ = viewtest.Render(t, Error(bare))
	if doc.Find(`nav[aria-label="Resources"]`).Length() != 0 {
		t.Error("no nav items, no nav")
	}
	if got := viewtest.Text(viewtest.One(t, doc, viewtest.TestID("error-status"))); got != "599 Error" {
		t.Errorf("unknown status = %q", got)
	}
}

func TestLogin(t *testing.T) {
	doc, _ := viewtest.Render(t, Login(model.LoginPage{Title: "Sign in to clusterdesk", Message: "No session."}))
	if doc.Find("nav, form, header").Length() != 0 {
		t.Error("login has no nav, no form, no top bar")
	}
	if !strings.Contains(viewtest.Text(viewtest.One(t, doc, viewtest.TestID("login-instructions"))), "Open the one-time login URL printed by clusterdesk in its terminal") {
		t.Error("instructions")
	}
	if doc.Find(`meta[name="csrf-token"]`).Length() != 0 {
		t.Error("no session, no csrf meta")
	}
}
