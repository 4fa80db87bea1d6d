//go:build !race

// The tests over every real-world manifest (newFixtureServer), built without
// the race detector: scripts/go-test-unit.sh runs them in its pass without
// -race. Each renders pages one request at a time on the test's goroutine,
// where the race detector has nothing to find, and under it loading and
// packing the fixtures' CRDs alone took 38 s of CI's unit layer (stop 56:
// TestMutatingWebhookPagesOfferTheEditor, the first to load them, 37.7 s;
// TestInsightPagesOnEveryRealManifest 13.4 s); without it, a few seconds.

package handlers

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/clusterdesk/clusterdesk/internal/present"
)

// TestMutatingWebhookPagesOfferTheEditor: the real-world mutating
// configurations list and render with their webhooks, and the pages offer the
// editor, as the validating kind's do (issue 45: a draft is replayed from the
// editor before it is applied).
func TestMutatingWebhookPagesOfferTheEditor(t *testing.T) {
	ts, fc := newFixtureServer(t)
	if len(fc.mutating) == 0 {
		t.Fatal("no mutating fixtures")
	}
	sess := ts.login(t)
	get := func(path string) (*httptest.ResponseRecorder, *goquery.Document) {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.AddCookie(sess)
		rec := ts.do(r)
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(rec.Body.String()))
		if err != nil {
			t.Fatal(err)
		}
		return rec, doc
	}
	rec, doc := get("/mutatingwebhooks")
	if rec.Code != http.StatusOK {
		t.Fatalf("list: %d", rec.Code)
	}
	var listed []string
	doc.Find(`tbody tr a[href^="/mutatingwebhooks/"]`).Each(func(_ int, a *goquery.Selection) { listed = append(listed, a.Text()) })
	for name := range fc.mutating {
		if !slices.ContainsFunc(listed, func(s string) bool { return strings.TrimSpace(s) == name }) {
			t.Errorf("list lacks %s (has %v)", name, listed)
		}
	}
	if doc.Find(`a[href="/mutatingwebhooks/new"]`).Length() != 1 {
		t.Error("the list offers no New")
	}
	for name, c := range fc.mutating {
		rec, doc := get("/mutatingwebhooks/" + name)
		if rec.Code != http.StatusOK {
			t.Errorf("%s: %d", name, rec.Code)
			continue
		}
		if n := doc.Find(`[data-testid="webhook-row"]`).Length(); n != len(c.Webhooks) {
			t.Errorf("%s: %d webhook rows, want %d", name, n, len(c.Webhooks))
		}
		if !strings.Contains(doc.Find(`[data-testid="webhook-details"]`).Text(), "Reinvocation policy") {
			t.Errorf("%s: no reinvocation policy", name)
		}
		if href, _ := doc.Find(`[data-testid="edit-link"]`).Attr("href"); href != "/mutatingwebhooks/"+name+"/edit" {
			t.Errorf("%s: edit link %q", name, href)
		}
	}
}

// TestInterceptListsMutatingFirst: the form answers with mutating webhooks,
// labelled as called before validating ones, ahead of them.
func TestInterceptListsMutatingFirst(t *testing.T) {
	ts, fc := newFixtureServer(t)
	sess := ts.login(t)
	r := httptest.NewRequest(http.MethodGet, "/validatingwebhooks/intercept?operation=CREATE&group=&version=v1&resource=pods&namespace=default", nil)
	r.AddCookie(sess)
	rec := ts.do(r)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, c := range fc.mutating {
		want += len(c.Webhooks)
	}
	for _, c := range fc.webhooks {
		want += len(c.Webhooks)
	}
	rows := doc.Find(`[data-testid="intercept-row"]`)
	if rows.Length() != want {
		t.Errorf("%d rows, want %d (every webhook of both kinds)", rows.Length(), want)
	}
	seenValidating := false
	rows.Each(func(i int, row *goquery.Selection) {
		kind := strings.TrimSpace(row.Find("td").Eq(1).Text())
		switch kind {
		case "mutating, called before validating":
			if seenValidating {
				t.Errorf("row %d: a mutating webhook after a validating one", i+1)
			}
		case "validating":
			seenValidating = true
		default:
			t.Errorf("row %d: kind %q", i+1, kind)
		}
	})
}

// TestInsightPagesOnEveryRealManifest renders every version's schema page of
// every real-world CRD, and the detail page of every real-world webhook
// configuration and CSI driver, without a cluster. (The CRD detail pages,
// dominated by the generic YAML view, are walked by the integration test.)
func TestInsightPagesOnEveryRealManifest(t *testing.T) {
	ts, fc := newFixtureServer(t)
	sess := ts.login(t)
	var paths []string
	for name, c := range fc.crds {
		for _, v := range c.Spec.Versions {
			if v.Schema != nil {
				paths = append(paths, "/crds/"+name+"/schema/"+v.Name)
			}
		}
	}
	for name := range fc.webhooks {
		paths = append(paths, "/validatingwebhooks/"+name)
	}
	for name := range fc.drivers {
		paths = append(paths, "/csidrivers/"+name)
	}
	for name := range fc.mutating {
		paths = append(paths, "/mutatingwebhooks/"+name)
	}
	var biggest struct {
		path  string
		bytes int
		took  time.Duration
	}
	for _, p := range paths {
		r := httptest.NewRequest(http.MethodGet, p, nil)
		r.AddCookie(sess)
		start := time.Now()
		rec := ts.do(r)
		took := time.Since(start)
		body := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Errorf("%s: status %d", p, rec.Code)
			continue
		}
		if !strings.Contains(body, `data-testid="detail-name"`) && !strings.Contains(body, `data-testid="schema-title"`) {
			t.Errorf("%s: no title", p)
		}
		if strings.Contains(p, "/schema/") {
			if n := strings.Count(body, `data-testid="schema-field"`); n == 0 || n > present.SchemaBudget {
				t.Errorf("%s: %d schema fields rendered", p, n)
			}
			if len(body) > biggest.bytes {
				biggest.path, biggest.bytes, biggest.took = p, len(body), took
			}
		}
	}
	if biggest.bytes > 1<<20 {
		t.Errorf("largest schema page %s is %d bytes", biggest.path, biggest.bytes)
	}
	t.Logf("%d pages; largest schema page %s: %d bytes, rendered in %v", len(paths), biggest.path, biggest.bytes, biggest.took)
}

func TestSchemaPageAnswers404ForUnknownVersionsAndFields(t *testing.T) {
	ts, fc := newFixtureServer(t)
	sess := ts.login(t)
	var name, version string
	for n, c := range fc.crds {
		if len(c.Spec.Versions) > 0 && c.Spec.Versions[0].Schema != nil && (name == "" || n < name) {
			name, version = n, c.Spec.Versions[0].Name
		}
	}
	for path, want := range map[string]int{
		"/crds/" + name + "/schema/" + version:                      http.StatusOK,
		"/crds/" + name + "/schema/" + version + "?path=spec":       http.StatusOK,
		"/crds/" + name + "/schema/" + version + "?path=spec.nope9": http.StatusNotFound,
		"/crds/" + name + "/schema/v999":                            http.StatusNotFound,
		"/crds/no-such-crd.example.com/schema/v1":                   http.StatusNotFound,
	} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.AddCookie(sess)
		if rec := ts.do(r); rec.Code != want {
			t.Errorf("%s: status %d, want %d", path, rec.Code, want)
		}
	}
}

func TestInterceptFormValidatesAndAnswers(t *testing.T) {
	ts, _ := newFixtureServer(t)
	sess := ts.login(t)
	get := func(query string) (int, string) {
		r := httptest.NewRequest(http.MethodGet, "/validatingwebhooks/intercept"+query, nil)
		r.AddCookie(sess)
		rec := ts.do(r)
		return rec.Code, rec.Body.String()
	}
	if code, body := get(""); code != http.StatusOK || !strings.Contains(body, `data-testid="intercept-form-el"`) || strings.Contains(body, `data-testid="intercept-result"`) {
		t.Errorf("empty form: status %d", code)
	}
	code, body := get("?operation=PATCH&version=&resource=&labels=a%3Db%3Dc")
	if code != http.StatusUnprocessableEntity {
		t.Errorf("bad form: status %d", code)
	}
	for _, field := range []string{"operation", "version", "resource", "labels"} {
		if !strings.Contains(body, `data-testid="intercept-`+field+`-error"`) {
			t.Errorf("no error shown for %s", field)
		}
	}
	// cert-manager's webhook covers every resource of its groups in v1.
	code, body = get("?operation=CREATE&group=cert-manager.io&version=v1&resource=certificates&namespace=default")
	if code != http.StatusOK || strings.Count(body, `data-testid="intercept-row"`) < 10 || !strings.Contains(body, "webhook.cert-manager.io") {
		t.Fatalf("answer: status %d", code)
	}
	if !strings.Contains(body, "1 webhook would be called") {
		t.Errorf("want exactly cert-manager's webhook called")
	}
}
