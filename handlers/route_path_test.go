package handlers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// countingBody is a request body of unknown length (as a chunked one) that
// counts what the server read of it.
type countingBody struct {
	left, read int
}

func (b *countingBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), b.left)
	for i := range n {
		p[i] = 'a'
	}
	b.left -= n
	b.read += n
	return n, nil
}

// The attack: a path whose decoding looks public (/login, /healthz,
// /static/...) while echo routes its raw spelling to a private route. The
// sign-in check used to read the decoded path, so such a request went on
// without a session: /%6Cogin reached the :kind list route, and
// POST /%73tatic/x/apply reached the editor's route with its 6 MiB body limit,
// and its chunked body was buffered before the CSRF check, from a client
// nobody had signed in. Now no such request runs a private route's code or
// has its body read: it is refused (400) or asked to sign in (401).
func TestEncodedPathsNeverReachPrivateRoutes(t *testing.T) {
	attacks := []struct {
		method, target string
		body           int // bytes of a chunked body, 0 for none
	}{
		{http.MethodGet, "/%6Cogin", 0},            // /login, routed as /:kind
		{http.MethodGet, "/%6cogin/oidc", 0},       // /login/oidc, routed as /:kind/:name
		{http.MethodGet, "/h%65althz", 0},          // /healthz
		{http.MethodGet, "/healthz%2F..", 0},       // /healthz/..
		{http.MethodGet, "/static%2F..%2Fcsrs", 0}, // /static/../csrs, routed as /:kind
		{http.MethodGet, "/%73tatic/x", 0},         // /static/x, routed as /:kind/:name
		{http.MethodGet, "/%73tatic/x/yaml", 0},
		{http.MethodGet, "/static%2Fx/-/cleanup", 0},
		{http.MethodPost, "/%73tatic/x/apply", 3 << 20}, // the editor's route: 6 MiB limit
		{http.MethodPost, "/%73tatic/x/preview", 3 << 20},
		{http.MethodPost, "/%73tatic/-/cleanup/confirm", 64 << 10},
		{http.MethodPost, "/%6Cogin/x/delete", 64 << 10},
	}
	for _, mode := range allModes {
		t.Run(string(mode), func(t *testing.T) {
			ms := newModeServer(t, mode, false)
			for _, a := range attacks {
				body := &countingBody{left: a.body}
				r := httptest.NewRequest(a.method, a.target, body)
				r.ContentLength = -1
				if a.body > 0 {
					r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				}
				rec := ms.do(r)
				if rec.Code != http.StatusBadRequest && rec.Code != http.StatusUnauthorized {
					t.Errorf("%s %s without a session: status %d, want 400 or 401: it reached route %q",
						a.method, a.target, rec.Code, routeOf(ms.e, r))
				}
				if body.read != 0 {
					t.Errorf("%s %s without a session: the server read %d bytes of its body", a.method, a.target, body.read)
				}
			}
		})
	}
}

// routeOf is the route template echo matches for r.
func routeOf(e *echo.Echo, r *http.Request) string {
	c := e.NewContext(r, httptest.NewRecorder())
	e.Router().Find(r.Method, echo.GetPath(r), c)
	return c.Path()
}

// The public routes are what they were, spelled plainly; a signed-in user's
// addresses as the console links them are not refused as ambiguous (";" is
// escaped in the raw path, which echo routes on).
func TestPlainPathsStillServed(t *testing.T) {
	ms := newModeServer(t, "local", false)
	for _, tc := range []struct {
		target string
		want   int
	}{
		{urls.Healthz, http.StatusOK},
		{urls.Login, http.StatusOK}, // the sign-in page
		{"/static/favicon.svg", http.StatusOK},
		{"/static/missing.js", http.StatusNotFound},
		{"/static/%2e%2e/csrs", http.StatusBadRequest}, // encoded dots: refused before the file handler (which refused them too)
		{"/csrs", http.StatusUnauthorized},
	} {
		rec := ms.do(httptest.NewRequest(http.MethodGet, tc.target, nil))
		if rec.Code != tc.want {
			t.Errorf("GET %s without a session: status %d, want %d", tc.target, rec.Code, tc.want)
		}
	}
	for _, target := range []string{urls.Object("csrs", "a;b"), urls.Object("csrs", "a b"), "/csrs/caf%C3%A9"} {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		ms.sign(r)
		if rec := ms.do(r); rec.Code == http.StatusBadRequest || rec.Code == http.StatusUnauthorized {
			t.Errorf("GET %s signed in: status %d", target, rec.Code)
		}
	}
}

// Exactly the sign-in, health and static routes are public, whatever their
// spelling in a request.
func TestPublicRoutesAreTheRouteTable(t *testing.T) {
	ms := newModeServer(t, "local", false)
	var got []string
	for _, rt := range ms.e.Routes() {
		if publicRoute(rt.Path) && rt.Method != echo.RouteNotFound {
			got = append(got, rt.Method+" "+rt.Path)
		}
	}
	slices.Sort(got)
	want := "GET /healthz|GET /login|GET /login/oidc|GET /login/oidc/callback|GET /readyz|GET /static/*|POST /login"
	if g := strings.Join(got, "|"); g != want {
		t.Fatalf("public routes:\n%s\nwant\n%s", g, want)
	}
}

func TestAmbiguousPath(t *testing.T) {
	for target, want := range map[string]bool{
		"/csrs":               false,
		"/csrs/a%3Bb":         false, // ";" needs its escape to stay in the segment
		"/csrs/a%20b":         false,
		"/csrs/caf%C3%A9":     false,
		"/csrs/100%25":        false,
		"/%6Cogin":            true,
		"/%6cogin":            true,
		"/static%2F..":        true,
		"/static%2f..":        true,
		"/csrs/a%2Eb":         true,
		"/csrs/a%7E":          true,
		"/csrs/a%5F":          true,
		"/csrs/a%2D":          true,
		"/csrs/%30":           true,
		"/static/%2e%2e/csrs": true,
	} {
		if got := ambiguousPath(httptest.NewRequest(http.MethodGet, target, nil)); got != want {
			t.Errorf("ambiguousPath(%s) = %v, want %v", target, got, want)
		}
	}
}
