package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// An event stream's request that renews the OIDC ID token writes the renewed
// cookie (the provider rotated the refresh token: the browser must get the
// new one) with the idle clock the request had (an open tab is not activity);
// a page's request, at the same time, moves the idle clock.
func TestIdentifyStreamWritesTheRenewalButNotTheIdleClock(t *testing.T) {
	now := time.Now()
	tok := idToken(t, now.Add(-time.Hour))
	g, r := oidcGate(t, OIDCSession{IDToken: tok, RefreshToken: "spent", IssuedAt: now.Add(-time.Hour), Expiry: now.Add(30 * time.Second), Subject: "alice"})
	signedIn, err := g.Sessions.Peek(r)
	if err != nil {
		t.Fatal(err)
	}
	// Five minutes later, the ID token due for renewal: this replica renewed
	// it already (no provider in a unit test), as another request's renewal.
	later := now.Add(5 * time.Minute)
	g.Sessions.now = func() time.Time { return later }
	next := OIDCSession{IDToken: idToken(t, now), RefreshToken: "rotated", IssuedAt: now, Expiry: now.Add(time.Hour), Subject: "alice"}
	g.OIDC.renewed.put(signedIn.ID, tok, next, g.OIDC.now())

	sent := func(w *httptest.ResponseRecorder) Session {
		t.Helper()
		// As a browser: of two cookies of one name (the idle clock's, then
		// the renewal's), the last one stays.
		last := map[string]*http.Cookie{}
		for _, c := range w.Result().Cookies() {
			last[c.Name] = c
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		for _, c := range last {
			r.AddCookie(c)
		}
		s, err := g.Sessions.Peek(r)
		if err != nil {
			t.Fatalf("no session cookie sent: %v", err)
		}
		return s
	}

	w := httptest.NewRecorder()
	id, _, err := g.IdentifyStream(w, r)
	if err != nil || id.Token != next.IDToken {
		t.Fatalf("stream: %v (acts with the renewed token: %v)", err, id.Token == next.IDToken)
	}
	s := sent(w)
	if s.Creds.RefreshToken != "rotated" || s.Creds.IDToken != next.IDToken {
		t.Errorf("the stream's cookie holds refresh token %q, want the rotated one", s.Creds.RefreshToken)
	}
	if !s.LastSeen.Equal(signedIn.LastSeen) {
		t.Errorf("the stream moved the idle clock from %v to %v", signedIn.LastSeen, s.LastSeen)
	}

	// A page's request does move it (what the check above would see if the
	// stream were taken for activity).
	w = httptest.NewRecorder()
	if _, _, err := g.IdentifySession(w, r); err != nil {
		t.Fatal(err)
	}
	if s := sent(w); !s.LastSeen.Equal(later) || s.Creds.RefreshToken != "rotated" {
		t.Errorf("a page's request: idle clock %v (want %v), refresh token %q", s.LastSeen, later, s.Creds.RefreshToken)
	}
}

// Local and token mode: a stream's request writes no cookie, however old
// the idle clock; a page's request refreshes it.
func TestIdentifyStreamLeavesTheIdleClock(t *testing.T) {
	s := NewSessions()
	g := &Gate{Mode: ModeLocal, Sessions: s}
	rec := httptest.NewRecorder()
	if err := s.Start(rec, "me"); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/events", nil)
	for _, c := range rec.Result().Cookies() {
		r.AddCookie(c)
	}
	s.now = func() time.Time { return time.Now().Add(5 * time.Minute) }
	w := httptest.NewRecorder()
	if _, _, err := g.IdentifyStream(w, r); err != nil {
		t.Fatal(err)
	}
	if c := w.Result().Cookies(); len(c) != 0 {
		t.Errorf("a stream's request set %v", c)
	}
	w = httptest.NewRecorder()
	if _, _, err := g.IdentifySession(w, r); err != nil {
		t.Fatal(err)
	}
	if c := w.Result().Cookies(); len(c) != 1 {
		t.Errorf("a page's request five minutes on set %v, want the refreshed cookie", c)
	}
}
