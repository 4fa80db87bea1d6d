package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

func startSession(t *testing.T, s *Sessions, user string) (*http.Cookie, Session) {
	t.Helper()
	rec := httptest.NewRecorder()
	if err := s.Start(rec, user); err != nil {
		t.Fatal(err)
	}
	c := cookieFrom(t, rec)
	sess, err := s.Peek(requestWith(c))
	if err != nil {
		t.Fatal(err)
	}
	return c, sess
}

func TestCSRFTokensAreBoundToOneSessionAndOneServer(t *testing.T) {
	s := NewSessions()
	_, a := startSession(t, s, "alice")
	_, a2 := startSession(t, s, "alice") // same user, another session
	if a.ID == "" || a.ID == a2.ID {
		t.Fatalf("session ids %q and %q: want distinct, non-empty", a.ID, a2.ID)
	}
	tok := s.CSRFToken(SessionBinding(a))
	if !s.ValidCSRF(SessionBinding(a), tok) {
		t.Fatal("a session's own token is refused")
	}
	for name, c := range map[string]struct{ binding, token string }{
		"another session of the same user": {SessionBinding(a2), tok},
		"empty token":                      {SessionBinding(a), ""},
		"empty binding":                    {"", s.CSRFToken("")},
		"truncated":                        {SessionBinding(a), tok[:len(tok)-1]},
		"the session id itself":            {SessionBinding(a), a.ID},
		"another server's key":             {SessionBinding(a), NewSessions().CSRFToken(SessionBinding(a))},
		"a proxy identity's token":         {SessionBinding(a), s.CSRFToken(ProxyBinding(kube.Identity{User: "alice"}))},
	} {
		if s.ValidCSRF(c.binding, c.token) {
			t.Errorf("%s: accepted", name)
		}
	}
	if strings.Contains(tok, a.ID) {
		t.Error("the token reveals the session id")
	}
	// Proxy identities differ by groups too: a token is not valid for more rights.
	if s.ValidCSRF(ProxyBinding(kube.Identity{User: "bob", Groups: []string{"admins"}}), s.CSRFToken(ProxyBinding(kube.Identity{User: "bob"}))) {
		t.Error("a proxy token is valid for another set of groups")
	}
}

func TestSignOutRevokesTheCookieUntilItWouldHaveExpired(t *testing.T) {
	s := NewSessions()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return clock }
	rev := NewMemoryRevoker(0)
	rev.now = s.now
	s.Revocations = rev
	g := &Gate{Mode: ModeLocal, Sessions: s}

	saved, _ := startSession(t, s, "alice")
	other, _ := startSession(t, s, "alice")
	if _, err := g.Identify(httptest.NewRecorder(), requestWith(saved)); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	ended, err := g.SignOut(rec, requestWith(saved))
	if err != nil || ended.ID == "" {
		t.Fatalf("SignOut = %+v, %v", ended, err)
	}
	if c := rec.Result().Cookies(); len(c) != 1 || c[0].MaxAge >= 0 {
		t.Errorf("sign-out should clear the cookie: %+v", c)
	}
	if _, err := g.Identify(httptest.NewRecorder(), requestWith(saved)); !errors.Is(err, ErrSignedOut) {
		t.Fatalf("the saved cookie after sign-out: %v, want ErrSignedOut", err)
	}
	if _, err := g.Identify(httptest.NewRecorder(), requestWith(other)); err != nil {
		t.Fatalf("another session of the user must survive: %v", err)
	}
	// Kept until the session's absolute expiry, and no longer.
	clock = clock.Add(s.Absolute - time.Minute)
	if !rev.Revoked(ended) {
		t.Fatal("the revocation was forgotten before the session's expiry")
	}
	clock = clock.Add(2 * time.Minute)
	if rev.Revoked(ended) || rev.Len() != 0 {
		t.Fatal("the revocation outlived the session")
	}
}

func TestMemoryRevokerIsBounded(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewMemoryRevoker(3)
	m.now = func() time.Time { return clock }
	_ = m.Revoke(Session{ID: "soon"}, clock.Add(time.Minute))
	_ = m.Revoke(Session{ID: "late1"}, clock.Add(time.Hour))
	_ = m.Revoke(Session{ID: "late2"}, clock.Add(2*time.Hour))
	_ = m.Revoke(Session{ID: "past"}, clock.Add(-time.Second)) // over already: not kept
	if m.Len() != 3 {
		t.Fatalf("len %d, want 3", m.Len())
	}
	_ = m.Revoke(Session{ID: "new"}, clock.Add(3*time.Hour))
	if m.Len() != 3 || m.Revoked(Session{ID: "soon"}) || !m.Revoked(Session{ID: "late1"}) || !m.Revoked(Session{ID: "new"}) {
		t.Fatalf("full: the entry expiring first should make room (len %d)", m.Len())
	}
	clock = clock.Add(90 * time.Minute) // late1 expired
	_ = m.Revoke(Session{ID: "newer"}, clock.Add(time.Hour))
	if m.Len() != 3 || !m.Revoked(Session{ID: "late2"}) || !m.Revoked(Session{ID: "new"}) || !m.Revoked(Session{ID: "newer"}) {
		t.Fatal("full: expired entries should go first")
	}
}

func TestPreSessionBindsTheSignInForm(t *testing.T) {
	s := NewSessions()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return clock }
	rec := httptest.NewRecorder()
	b, err := s.PreSession(rec, httptest.NewRequest("GET", "/login", nil))
	if err != nil || b == "" {
		t.Fatal(b, err)
	}
	cs := rec.Result().Cookies()
	if len(cs) != 1 || cs[0].Name != preSessionCookie || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("pre-session cookie: %+v", cs)
	}
	r := requestWith(cs[0])
	if got, ok := s.PreSessionBinding(r); !ok || got != b {
		t.Fatal("the pre-session cookie does not name its binding")
	}
	// A second form view keeps the same pre-session (two open tabs both work).
	rec2 := httptest.NewRecorder()
	if again, _ := s.PreSession(rec2, r); again != b || len(rec2.Result().Cookies()) != 0 {
		t.Fatal("a valid pre-session was replaced")
	}
	// Made-up, another server's, or old pre-sessions bind nothing.
	if _, ok := s.PreSessionBinding(requestWith(&http.Cookie{Name: preSessionCookie, Value: "made-up"})); ok {
		t.Error("a made-up pre-session cookie was accepted")
	}
	if _, ok := NewSessions().PreSessionBinding(r); ok {
		t.Error("another server's pre-session was accepted")
	}
	clock = clock.Add(preSessionLife + time.Second)
	if _, ok := s.PreSessionBinding(r); ok {
		t.Error("an hour-old pre-session was accepted")
	}
	s.Secure = true
	rec3 := httptest.NewRecorder()
	if _, err := s.PreSession(rec3, httptest.NewRequest("GET", "/login", nil)); err != nil {
		t.Fatal(err)
	}
	if c := rec3.Result().Cookies()[0]; c.Name != "__Host-clusterdesk_presession" || !c.Secure || c.Path != "/" || c.Domain != "" {
		t.Errorf("over TLS the pre-session cookie should be __Host-: %+v", c)
	}
}
