package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestLoginTokensAreSingleUse(t *testing.T) {
	var announced []string
	l := NewLoginTokens(func(tok string) { announced = append(announced, tok) })
	first := announced[0]
	if len(first) != 48 {
		t.Fatalf("token length %d", len(first))
	}
	if l.Redeem("") || l.Redeem("wrong") {
		t.Fatal("empty or wrong token accepted")
	}
	if !l.Redeem(first) {
		t.Fatal("current token refused")
	}
	if l.Redeem(first) {
		t.Fatal("a spent token was accepted twice")
	}
	if len(announced) != 2 || announced[1] == first || !l.Redeem(announced[1]) {
		t.Fatalf("the next token must be announced and valid: %v", announced)
	}
}

func cookieFrom(t *testing.T, rec *httptest.ResponseRecorder) *http.Cookie {
	t.Helper()
	for _, c := range rec.Result().Cookies() {
		if c.Name == CookieName {
			return c
		}
	}
	t.Fatal("no session cookie set")
	return nil
}

func TestSessions(t *testing.T) {
	s := NewSessions()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return clock }

	rec := httptest.NewRecorder()
	if err := s.Start(rec, "alice"); err != nil {
		t.Fatal(err)
	}
	c := cookieFrom(t, rec)
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie attributes: %+v", c)
	}
	req := func(c *http.Cookie) (*httptest.ResponseRecorder, *http.Request) {
		r := httptest.NewRequest("GET", "/", nil)
		if c != nil {
			r.AddCookie(c)
		}
		return httptest.NewRecorder(), r
	}

	w, r := req(c)
	sess, err := s.Check(w, r)
	if err != nil || sess.User != "alice" {
		t.Fatalf("valid cookie: %v %+v", err, sess)
	}

	w, r = req(nil)
	if _, err := s.Check(w, r); err != ErrNoSession {
		t.Errorf("no cookie: %v", err)
	}
	tampered := *c
	tampered.Value = c.Value[:len(c.Value)-2] + "xx"
	w, r = req(&tampered)
	if _, err := s.Check(w, r); err != ErrNoSession {
		t.Errorf("tampered cookie: %v", err)
	}
	other := NewSessions()
	w, r = req(c)
	if _, err := other.Check(w, r); err != ErrNoSession {
		t.Errorf("cookie from another key accepted: %v", err)
	}

	clock = clock.Add(10 * time.Minute)
	w, r = req(c)
	if _, err := s.Check(w, r); err != nil {
		t.Fatalf("within idle: %v", err)
	}
	refreshed := cookieFrom(t, w)
	clock = clock.Add(16 * time.Minute)
	w, r = req(c)
	if _, err := s.Check(w, r); err != ErrExpired {
		t.Errorf("old cookie past idle: %v", err)
	}
	w, r = req(refreshed)
	if _, err := s.Check(w, r); err == nil {
		t.Errorf("refreshed cookie 16 min after refresh should be idle-expired")
	}
}
