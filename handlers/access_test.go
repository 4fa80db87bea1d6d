package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// kindsOnlyCluster knows every kind and holds nothing: any read of its data
// panics (the embedded nil Cluster), which the server answers with a 500. A
// route that reaches the cache before the access check cannot pass for one
// that checks.
type kindsOnlyCluster struct{ emptyCluster }

func (kindsOnlyCluster) Kind(id kube.KindID) (kube.Kind, bool) {
	i := slices.IndexFunc(kube.AllKinds(), func(k kube.Kind) bool { return k.ID == id })
	if i < 0 {
		return kube.Kind{}, false
	}
	return kube.AllKinds()[i], true
}

// listReviews records the list reviews asked, and denies every review.
type listReviews struct {
	mu        sync.Mutex
	resources []string
}

func (a *listReviews) Can(_ context.Context, verb, _, resource, _, _ string) (bool, error) {
	if verb == "list" {
		a.mu.Lock()
		a.resources = append(a.resources, resource)
		a.mu.Unlock()
	}
	return false, nil
}

// kindRoute is one request to a route under a kind.
type kindRoute struct {
	method, route, path string
	kind                kube.Kind
}

// kindRoutes is every route of the table under a kind (its first segment is
// :kind or a kind's ID), made concrete for each kind it serves.
func kindRoutes(e *echo.Echo) []kindRoute {
	var out []kindRoute
	for _, rt := range e.Routes() {
		first, _, _ := strings.Cut(strings.TrimPrefix(rt.Path, "/"), "/")
		for _, k := range kube.AllKinds() {
			if first != ":kind" && first != string(k.ID) {
				continue
			}
			r := strings.NewReplacer(":kind", string(k.ID), ":name", "demo", ":id", "s-0123456789ab",
				":version", "v1", ":ns", "default", ":obj", "demo")
			out = append(out, kindRoute{method: rt.Method, route: rt.Path, path: r.Replace(rt.Path), kind: k})
		}
	}
	return out
}

// listPages answer a user who may not list the kind with the page and a
// Forbidden banner; every other kind route answers 403 alone.
var listPages = []string{"/:kind", "/csrs", "/flowschemas", "/flowschemas/-/classify"}

// TestEveryKindRouteChecksListAccess: every GET and POST under a kind asks
// whether the user may list that kind before its handler reads anything, like
// TestEveryMutatingRouteNeedsCSRF for CSRF.
func TestEveryKindRouteChecksListAccess(t *testing.T) {
	access := &listReviews{}
	ts := newTestServerOf(t, false, kindsOnlyCluster{}, access)
	sess := ts.login(t)
	routes := kindRoutes(ts.e)
	if len(routes) < 40 {
		t.Fatalf("only %d kind routes found: the table or this test changed", len(routes))
	}
	// A concrete path may be served by a more specific route (GET /csrs is
	// the queue, not /:kind); every route under a kind must be reached by one
	// of them at least.
	reached := map[string]bool{}
	for _, kr := range routes {
		r := httptest.NewRequest(kr.method, kr.path, nil)
		c := ts.e.NewContext(r, httptest.NewRecorder())
		ts.e.Router().Find(kr.method, r.URL.Path, c)
		reached[kr.method+" "+c.Path()] = true
	}
	for _, kr := range routes {
		if !reached[kr.method+" "+kr.route] {
			t.Errorf("%s %s: no request of this test reaches it", kr.method, kr.route)
		}
	}
	for _, kr := range routes {
		t.Run(kr.method+" "+kr.path, func(t *testing.T) {
			r := httptest.NewRequest(kr.method, kr.path, nil)
			r.AddCookie(sess)
			if kr.method == http.MethodPost {
				r.Header.Set("Sec-Fetch-Site", "same-origin")
				r.Header.Set("X-CSRF-Token", pageCSRFToken(t, ts.e, withCookie(sess)))
			}
			access.mu.Lock()
			access.resources = nil
			access.mu.Unlock()
			rec := ts.do(r)
			if rec.Code != http.StatusForbidden {
				t.Fatalf("status %d, want 403 before anything is read: %.300s", rec.Code, rec.Body.String())
			}
			access.mu.Lock()
			asked := slices.Contains(access.resources, kr.kind.Resource)
			access.mu.Unlock()
			if !asked {
				t.Errorf("no list review for %s", kr.kind.Resource)
			}
			doc, err := goquery.NewDocumentFromReader(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(listPages, kr.route) {
				if doc.Find(`[data-testid="banner-forbidden"]`).Length() != 1 {
					t.Error("a list page shows the Forbidden banner")
				}
			} else if !strings.Contains(doc.Text(), "your identity may not read this kind") {
				t.Errorf("the 403 says why: %.300s", doc.Text())
			}
		})
	}
	if ts.writer.calls != 0 {
		t.Fatalf("a write happened for a user who may not list the kind")
	}
}

// TestPagesVaryOnHXRequest: the pages that answer htmx with a fragment say
// so in Vary, for both answers.
func TestPagesVaryOnHXRequest(t *testing.T) {
	ts := newTestServerOf(t, false, kindsOnlyCluster{}, denyAll{})
	sess := ts.login(t)
	for _, path := range []string{"/crds", "/csrs", "/flowschemas"} {
		for _, htmx := range []bool{false, true} {
			r := httptest.NewRequest(http.MethodGet, path, nil)
			r.AddCookie(sess)
			if htmx {
				r.Header.Set("HX-Request", "true")
			}
			rec := ts.do(r)
			if !slices.Contains(rec.Header().Values("Vary"), "HX-Request") {
				t.Errorf("%s (htmx %v): Vary %q", path, htmx, rec.Header().Values("Vary"))
			}
			if full := strings.Contains(rec.Body.String(), "<html"); full == htmx {
				t.Errorf("%s (htmx %v): full page %v", path, htmx, full)
			}
		}
	}
}
