package handlers

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func (f fixtureCluster) MutatingWebhooks() ([]*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	out := make([]*admissionregistrationv1.MutatingWebhookConfiguration, 0, len(f.mutating))
	for _, c := range f.mutating {
		out = append(out, c)
	}
	return out, nil
}

func (f fixtureCluster) MutatingWebhook(name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	if c, ok := f.mutating[name]; ok {
		return c, nil
	}
	return nil, notFound("mutatingwebhookconfigurations", name)
}

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
