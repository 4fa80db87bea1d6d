package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// pageCSRFToken returns the CSRF token that a page served to the signed-in
// request carries (<meta name="csrf-token">, which htmx sends as
// X-CSRF-Token and the forms as _csrf): tests post what a browser would.
func pageCSRFToken(t testing.TB, h http.Handler, sign func(*http.Request)) string {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	sign(r)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := doc.Find(`meta[name="csrf-token"]`).Attr("content")
	if tok == "" {
		t.Fatalf("GET / (status %d) carries no CSRF token", rec.Code)
	}
	return tok
}

// withCookie signs a request with a session cookie.
func withCookie(c *http.Cookie) func(*http.Request) {
	return func(r *http.Request) { r.AddCookie(c) }
}

// signInForm is token mode's sign-in form as a browser gets it: the cookies
// set with the form (the pre-session) and the form's CSRF token.
func signInForm(t testing.TB, h http.Handler) ([]*http.Cookie, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/login", nil))
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := doc.Find(`[data-testid="token-form"] input[name="_csrf"]`).Attr("value")
	if tok == "" {
		t.Fatalf("GET /login (status %d): no token form with a CSRF token", rec.Code)
	}
	return rec.Result().Cookies(), tok
}

// tokenSignInRequest is the browser's post of the sign-in form with token.
func tokenSignInRequest(t testing.TB, h http.Handler, token string) *http.Request {
	t.Helper()
	cookies, csrf := signInForm(t, h)
	r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"token": {token}, "_csrf": {csrf}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	for _, c := range cookies {
		r.AddCookie(c)
	}
	return r
}

// plantedToken is what a same-site attacker sets as a CSRF cookie and posts
// in the form (echo's double-submit check accepted that pair).
const plantedToken = "attacker-chosen-token-0123456789abcdef"

// forgery is one way to post without the console's page: each must fail the
// CSRF check on every route.
type forgery struct {
	name          string
	site, origin  string // Sec-Fetch-Site and Origin headers ("" leaves it out)
	field, header string // _csrf form field, X-CSRF-Token header
	plantsCookies bool   // sets CSRF cookies to plantedToken
}

// forgeries are the attacks on a signed-in session whose page token is own;
// other is another session's token. httptest requests go to example.com.
func forgeries(own, other string) []forgery {
	return []forgery{
		{name: "no token, no Sec-Fetch-Site"},
		{name: "no token, cross-site", site: "cross-site"},
		{name: "no token, same-origin", site: "same-origin"},
		{name: "same-site, planted cookie and field", site: "same-site", origin: "http://example.com:8081", field: plantedToken, plantsCookies: true},
		{name: "same-site, planted cookie and header", site: "same-site", origin: "http://sub.example.com", header: plantedToken, plantsCookies: true},
		{name: "same-origin, planted cookie and field", site: "same-origin", field: plantedToken, plantsCookies: true},
		{name: "same-site with the session's own token", site: "same-site", origin: "http://example.com:8081", field: own, header: own},
		{name: "claims same-origin, foreign Origin, own token", site: "same-origin", origin: "http://example.com:8081", field: own},
		{name: "old browser, foreign Origin, own token", origin: "https://evil.example", header: own},
		{name: "Origin null, own token", site: "same-origin", origin: "null", header: own},
		{name: "same-origin, another session's token", site: "same-origin", origin: "http://example.com", field: other, header: other},
	}
}

// request builds the forged POST to path with form, signed in by sign.
func (f forgery) request(path string, form url.Values, sign func(*http.Request)) *http.Request {
	v := url.Values{}
	for k, vs := range form {
		v[k] = vs
	}
	if f.field != "" {
		v.Set("_csrf", f.field)
	}
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(v.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if f.site != "" {
		r.Header.Set("Sec-Fetch-Site", f.site)
	}
	if f.origin != "" {
		r.Header.Set("Origin", f.origin)
	}
	if f.header != "" {
		r.Header.Set("X-CSRF-Token", f.header)
	}
	sign(r)
	if f.plantsCookies {
		for _, n := range []string{"clusterdesk_csrf", "_csrf", "csrf"} {
			r.AddCookie(&http.Cookie{Name: n, Value: plantedToken})
		}
	}
	return r
}

// refusedForCSRF reports a 403 given by the CSRF check (not another 403).
func refusedForCSRF(rec *httptest.ResponseRecorder) bool {
	return rec.Code == http.StatusForbidden && strings.Contains(rec.Body.String(), "CSRF check failed")
}
