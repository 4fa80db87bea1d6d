package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// emptyCluster is a cache that has not synced anything: enough for tests of
// the security layer, which must decide before any data is touched.
type emptyCluster struct{ Cluster }

func (emptyCluster) Ready() bool                        { return false }
func (emptyCluster) ServerVersion() string              { return "" }
func (emptyCluster) Statuses() []kube.KindStatus        { return nil }
func (emptyCluster) Kind(kube.KindID) (kube.Kind, bool) { return kube.Kind{}, false }

type denyAll struct{}

func (denyAll) Can(context.Context, string, string, string, string, string) (bool, error) {
	return false, nil
}

type recordingWriter struct{ calls int }

func (w *recordingWriter) DecideCSR(context.Context, string, types.UID, bool, string, string) ([]string, error) {
	w.calls++
	return nil, nil
}

// routeTableSignInLimit lets the route-table tests send their dozens of forged
// /login posts from one test address: they test the CSRF check, which a 429
// from the sign-in limit (tested on its own in signin_limit_test.go) would hide.
var routeTableSignInLimit = SignInLimit{Every: time.Millisecond, Burst: 10000, Clients: 16}

// newTestServer is the route table's console: nothing synced, nothing
// allowed (newFakeConsole, harness_test.go).
func newTestServer(t *testing.T, readOnly bool) *testServer {
	t.Helper()
	return newTestServerOf(t, readOnly, emptyCluster{}, denyAll{})
}

// newTestServerOf is newTestServer with a cluster and access of the test's.
func newTestServerOf(t *testing.T, on bool, cluster Cluster, access Access) *testServer {
	t.Helper()
	return newFakeConsole(t, cluster, access, readOnlyConsole(on), withSignInLimit(routeTableSignInLimit))
}

// concrete fills route parameters so every route in the table can be requested.
func concrete(path string) string {
	r := strings.NewReplacer(":kind", "csrs", ":name", "demo", "*", "x")
	return r.Replace(path)
}

func TestEveryRouteNeedsASession(t *testing.T) {
	ts := newTestServer(t, false)
	for _, rt := range ts.e.Routes() {
		path := concrete(rt.Path)
		if publicRoute(rt.Path) || rt.Method == echo.RouteNotFound {
			continue
		}
		t.Run(rt.Method+" "+rt.Path, func(t *testing.T) {
			rec := ts.do(httptest.NewRequest(rt.Method, path, nil))
			if rec.Code != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", rec.Code)
			}
			if !strings.Contains(rec.Body.String(), "login URL") {
				t.Errorf("the 401 page should say how to sign in")
			}
		})
	}
	if ts.writer.calls != 0 {
		t.Fatalf("a write happened without a session")
	}
}

func TestEveryMutatingRouteNeedsCSRF(t *testing.T) {
	ts := newTestServer(t, false)
	sess := ts.login(t)
	own := pageCSRFToken(t, ts.e, withCookie(sess))
	other := pageCSRFToken(t, ts.e, withCookie(ts.login(t)))
	if own == other {
		t.Fatal("two sessions got the same CSRF token")
	}
	for _, rt := range ts.e.Routes() {
		if rt.Method != http.MethodPost {
			continue
		}
		t.Run(rt.Path, func(t *testing.T) {
			for _, f := range forgeries(own, other) {
				r := f.request(concrete(rt.Path), url.Values{"message": {"x"}}, withCookie(sess))
				if rec := ts.do(r); !refusedForCSRF(rec) {
					t.Errorf("%s: status %d, want 403 from the CSRF check: %.200s", f.name, rec.Code, rec.Body.String())
				}
			}
		})
	}
	if ts.writer.calls != 0 {
		t.Fatalf("a write happened without a CSRF token")
	}
}

func TestReadOnlyRefusesEveryMutatingRoute(t *testing.T) {
	ts := newTestServer(t, true)
	sess := ts.login(t)
	for _, rt := range ts.e.Routes() {
		// Signing in and out are not changes to the cluster, nor are the
		// readPOSTRoutes (the simulator: TestInterceptPOSTReadOnly).
		if rt.Method != http.MethodPost || rt.Path == "/logout" || rt.Path == "/login" || readPOSTRoutes[rt.Path] {
			continue
		}
		t.Run(rt.Path, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, concrete(rt.Path), nil)
			// Passes CSRF: the read-only guard must still refuse.
			r.Header.Set("Sec-Fetch-Site", "same-origin")
			r.Header.Set("X-CSRF-Token", pageCSRFToken(t, ts.e, withCookie(sess)))
			r.AddCookie(sess)
			rec := ts.do(r)
			if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "read-only") {
				t.Fatalf("status %d, want 403 naming read-only mode", rec.Code)
			}
		})
	}
	if ts.writer.calls != 0 {
		t.Fatalf("a write happened in read-only mode")
	}
}

func TestLoginTokenIsSingleUseAndHeadersAreStrict(t *testing.T) {
	ts := newTestServer(t, false)
	first := ts.token
	ts.login(t)
	rec := ts.do(httptest.NewRequest(http.MethodGet, "/login?token="+first, nil))
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("reused token: status %d, want 401", rec.Code)
	}
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP = %q", csp)
	}
	if rec.Header().Get("X-Frame-Options") != "DENY" || rec.Header().Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("missing hardening headers: %v", rec.Header())
	}
}

func TestHealthIsPublicAndReadyzTellsWhy(t *testing.T) {
	ts := newTestServer(t, false)
	if rec := ts.do(httptest.NewRequest(http.MethodGet, "/healthz", nil)); rec.Code != http.StatusOK {
		t.Fatalf("healthz %d", rec.Code)
	}
	if rec := ts.do(httptest.NewRequest(http.MethodGet, "/readyz", nil)); rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("readyz on an unsynced cache: %d", rec.Code)
	}
}

func TestUnknownKindIs404(t *testing.T) {
	ts := newTestServer(t, false)
	r := httptest.NewRequest(http.MethodGet, "/pods", nil)
	r.AddCookie(ts.login(t))
	rec := ts.do(r)
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "pods") {
		t.Fatalf("status %d body %q", rec.Code, rec.Body.String()[:min(200, rec.Body.Len())])
	}
}
