package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/auth"
)

// Sessions of the harness's consoles (harness_test.go): signing in as a
// browser would, in each mode, and the session cookie that comes back.

// login redeems the console's current one-time token (local mode) and
// returns the session cookie; benchmarks sign in with it too.
func (ts *testServer) login(t testing.TB) *http.Cookie {
	t.Helper()
	return sessionCookie(t, ts.do(httptest.NewRequest(http.MethodGet, "/login?token="+ts.token, nil)))
}

// sessionCookie is the session cookie a successful sign-in (a 303 to the
// console) sets.
func sessionCookie(t testing.TB, rec *httptest.ResponseRecorder) *http.Cookie {
	t.Helper()
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("sign-in: status %d: %s", rec.Code, rec.Body.String()[:min(300, rec.Body.Len())])
	}
	if c := sessionOf(rec.Result().Cookies()); c != nil {
		return c
	}
	t.Fatal("sign-in set no session cookie")
	return nil
}

// sessionOf is the session cookie among cookies, nil without one.
func sessionOf(cookies []*http.Cookie) *http.Cookie {
	for _, c := range cookies {
		if c.Name == auth.CookieName {
			return c
		}
	}
	return nil
}

// noRedirects is a client that returns a redirect instead of following it:
// a sign-in's 303 carries the cookie.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// loginOver signs in to a console served at base (an httptest.Server's URL)
// with local mode's one-time token, over a real connection.
func loginOver(t testing.TB, base, token string) *http.Cookie {
	t.Helper()
	resp, err := noRedirects.Get(base + "/login?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c := sessionOf(resp.Cookies()); c != nil {
		return c
	}
	t.Fatal("no session cookie")
	return nil
}
