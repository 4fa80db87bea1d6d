package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// publicURLServer is local mode's console behind a TLS-terminating proxy:
// plain HTTP, --public-url https://console.example.com. It returns the
// session cookie its one-time login set, which must be the __Host- one.
func publicURLServer(t *testing.T) (http.Handler, *http.Cookie) {
	t.Helper()
	ts := newFakeConsole(t, emptyCluster{}, denyAll{}, withSignInLimit(routeTableSignInLimit), func(d *Deps) {
		d.PublicOrigin = "https://console.example.com"
	})
	h := ts.e
	rec := ts.do(httptest.NewRequest(http.MethodGet, "/login?token="+ts.token, nil))
	for _, c := range rec.Result().Cookies() {
		if strings.HasSuffix(c.Name, auth.CookieName) { // the name is the attack tests' to check
			return h, c
		}
	}
	t.Fatalf("login (status %d) set no session cookie: %v", rec.Code, rec.Result().Cookies())
	return nil, nil
}

// With an https public URL every answer carries HSTS though the listener is
// plain HTTP (the proxy terminated TLS); without one, plain HTTP sends none
// (TestHSTSOnlyOverTLS).
func TestHSTSWithAnHTTPSPublicURL(t *testing.T) {
	h, _ := publicURLServer(t)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for _, path := range []string{"/healthz", "/login", "/csrs", "/no-such-page"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Strict-Transport-Security"); got != hstsValue {
			t.Errorf("%s (status %d) over the plain listener: Strict-Transport-Security %q, want %q", path, resp.StatusCode, got, hstsValue)
		}
	}
}

// With a public URL a form is accepted only from its origin, whatever Host
// the proxy forwards: the Host header's origin, another port or scheme of
// the public host, and a sibling subdomain are refused; the public origin
// passes the origin check though Host names the Service.
func TestPublicURLIsTheOnlyOrigin(t *testing.T) {
	h, sess := publicURLServer(t)
	token := pageCSRFToken(t, h, withCookie(sess))
	post := func(site, origin string) int {
		r := httptest.NewRequest(http.MethodPost, "/logout", strings.NewReader(url.Values{"_csrf": {token}}.Encode()))
		r.Host = "clusterdesk.clusterdesk.svc:8080" // as the proxy forwards it
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if site != "" {
			r.Header.Set("Sec-Fetch-Site", site)
		}
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		r.AddCookie(sess)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	for _, tc := range []struct{ site, origin string }{
		{"same-origin", "http://clusterdesk.clusterdesk.svc:8080"}, // the Host header's origin
		{"", "http://clusterdesk.clusterdesk.svc:8080"},            // an old browser, same
		{"same-origin", "http://console.example.com"},              // the public host over http
		{"same-origin", "https://console.example.com:8443"},        // another port
		{"same-site", "https://evil.example.com"},                  // a sibling subdomain
		{"", "https://evil.example.com"},
		{"same-origin", "null"},
	} {
		if code := post(tc.site, tc.origin); code != http.StatusForbidden {
			t.Errorf("Sec-Fetch-Site %q, Origin %q: status %d, want 403", tc.site, tc.origin, code)
		}
	}
	// The public origin, from an old browser (no Sec-Fetch-Site): the
	// standard check alone would compare it with Host and refuse.
	if code := post("", "https://console.example.com"); code != http.StatusOK {
		t.Errorf("the public origin without Sec-Fetch-Site: status %d, want 200 (signed out)", code)
	}
	h, sess = publicURLServer(t) // the post above signed out
	token = pageCSRFToken(t, h, withCookie(sess))
	if code := post("same-origin", "https://console.example.com"); code != http.StatusOK {
		t.Errorf("the public origin: status %d, want 200 (signed out)", code)
	}
}

// The sibling-subdomain attack: evil.example.com sets clusterdesk_session for
// Domain=example.com, and the browser sends it to console.example.com with
// the console's own. Here the planted value is even a valid sealed session
// (the worst case: the attacker's own, to sign the victim in as them). With
// an https public URL the console reads only __Host-clusterdesk_session, so
// the planted cookie is no session; the login's Set-Cookie is Secure,
// __Host-, Path=/ and has no Domain.
func TestPlantedPlainSessionCookieIsRefusedWithAnHTTPSPublicURL(t *testing.T) {
	h, sess := publicURLServer(t)
	if !sess.Secure || sess.Path != "/" || sess.Domain != "" || sess.Name != "__Host-clusterdesk_session" {
		t.Errorf("session cookie %+v: want __Host-clusterdesk_session, Secure, Path=/, no Domain", sess)
	}
	get := func(c *http.Cookie) int {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(c)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	if code := get(sess); code != http.StatusOK {
		t.Fatalf("GET / with the __Host- session: status %d", code)
	}
	planted := &http.Cookie{Name: auth.CookieName, Value: sess.Value}
	if code := get(planted); code == http.StatusOK {
		t.Errorf("GET / with the session planted as %s: status %d, want it refused", planted.Name, code)
	}
}

// Login CSRF through a sibling subdomain: the attacker gets a pre-session and
// its form token from the console, plants the pre-session as
// clusterdesk_presession for Domain=example.com and posts the form with its
// token. With an https public URL only __Host-clusterdesk_presession is read:
// the post fails the CSRF check (403) before any token is reviewed, while
// the same form with the console's own cookie passes it.
func TestPlantedPlainPreSessionIsRefusedWithAnHTTPSPublicURL(t *testing.T) {
	reviews := 0
	h := newConsole(t, Deps{
		Cluster: emptyCluster{}, Access: denyAll{}, Writer: &recordingWriter{},
		SignInLimit: routeTableSignInLimit, PublicOrigin: "https://console.example.com",
	}, tokenMode(func(context.Context, string) (kube.Identity, error) {
		reviews++
		return kube.Identity{}, errors.New("this unit test reviews no token")
	})).e
	cookies, csrf := signInForm(t, h)
	if len(cookies) != 1 {
		t.Fatalf("GET /login set %v, want one pre-session cookie", cookies)
	}
	if cookies[0].Name != "__Host-clusterdesk_presession" || !cookies[0].Secure || cookies[0].Path != "/" || cookies[0].Domain != "" {
		t.Errorf("GET /login set %v, want one __Host-clusterdesk_presession, Secure, Path=/, no Domain", cookies)
	}
	post := func(c *http.Cookie) int {
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"token": {"attacker-token"}, "_csrf": {csrf}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		r.AddCookie(c)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	if code := post(&http.Cookie{Name: "clusterdesk_presession", Value: cookies[0].Value}); code != http.StatusForbidden || reviews != 0 {
		t.Errorf("the pre-session planted under the plain name: status %d, %d token reviews; want 403 and none", code, reviews)
	}
	if code := post(cookies[0]); code == http.StatusForbidden || reviews != 1 {
		t.Errorf("the console's own pre-session: status %d, %d token reviews; want past the CSRF check to the review", code, reviews)
	}
}
