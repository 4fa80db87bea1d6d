package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A flash is shown once, to the session it was set for, within FlashLife:
// copied into another session's browser it shows nothing, and kept past its
// life (a cookie jar ignoring Max-Age, or a copy replayed later) neither.
func TestFlashIsBoundToItsSessionAndExpires(t *testing.T) {
	s := NewSessionsWithKeys(mustKeys(t, keyLine(9)))
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return clock }
	_, alice := startSession(t, s, "alice")
	_, bob := startSession(t, s, "bob")
	rec := httptest.NewRecorder()
	if err := s.SetFlash(rec, SessionBinding(alice), []string{"Approved csr-1"}); err != nil {
		t.Fatal(err)
	}
	flash := rec.Result().Cookies()[0]
	take := func(binding string) ([]string, bool) {
		var got []string
		ok := s.TakeFlash(httptest.NewRecorder(), requestWith(flash), binding, &got)
		return got, ok
	}
	if got, ok := take(SessionBinding(bob)); ok {
		t.Errorf("alice's flash replayed into bob's session shows %q", got)
	}
	if got, ok := take(""); ok {
		t.Errorf("alice's flash shows without a session: %q", got)
	}
	if got, ok := take(SessionBinding(alice)); !ok || len(got) != 1 || got[0] != "Approved csr-1" {
		t.Fatalf("alice's own flash: %q, %v", got, ok)
	}
	clock = clock.Add(FlashLife)
	if got, ok := take(SessionBinding(alice)); ok {
		t.Errorf("a flash %s old still shows: %q", FlashLife, got)
	}
}

// With Secure (an https public URL or TLS) the flash is a __Host- cookie and
// only that name is read: one a sibling subdomain plants under the plain name
// is ignored.
func TestSecureFlashReadsOnlyTheHostPrefixedName(t *testing.T) {
	s := NewSessionsWithKeys(mustKeys(t, keyLine(10)))
	s.Secure = true
	sess := Session{ID: "alice-session"}
	rec := httptest.NewRecorder()
	if err := s.SetFlash(rec, SessionBinding(sess), []string{"hello"}); err != nil {
		t.Fatal(err)
	}
	c := rec.Result().Cookies()[0]
	if c.Name != "__Host-clusterdesk_flash" || !c.Secure || c.Path != "/" || c.Domain != "" || !c.HttpOnly {
		t.Fatalf("flash cookie %+v, want __Host-clusterdesk_flash, Secure, Path=/, no Domain", c)
	}
	var got []string
	planted := &http.Cookie{Name: "clusterdesk_flash", Value: c.Value}
	if s.TakeFlash(httptest.NewRecorder(), requestWith(planted), SessionBinding(sess), &got) {
		t.Errorf("a flash under the plain name was read with Secure set: %q", got)
	}
	if !s.TakeFlash(httptest.NewRecorder(), requestWith(c), SessionBinding(sess), &got) || got[0] != "hello" {
		t.Errorf("the __Host- flash was not read: %q", got)
	}
}
