package handlers

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/auth"
)

// publicURLServer is local mode's console behind a TLS-terminating proxy:
// plain HTTP, --public-url https://console.example.com (main sets Secure
// from it), and Host rewritten by the proxy to the Service's name.
func publicURLServer(t *testing.T) (http.Handler, *http.Cookie) {
	t.Helper()
	sessions := auth.NewSessions()
	sessions.Secure = true
	var token string
	h := New(Deps{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Cluster: emptyCluster{}, Access: denyAll{},
		Writer: &recordingWriter{}, Sessions: sessions, User: "tester", SignInLimit: routeTableSignInLimit,
		Logins:       auth.NewLoginTokens(func(tok string) { token = tok }),
		PublicOrigin: "https://console.example.com",
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/login?token="+token, nil))
	for _, c := range rec.Result().Cookies() {
		if c.Name == auth.SecureCookieName {
			return h, c
		}
	}
	t.Fatalf("login (status %d) set no %s cookie: %v", rec.Code, auth.SecureCookieName, rec.Result().Cookies())
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
