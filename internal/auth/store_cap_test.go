package auth

import (
	"net/http/httptest"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// TestOneIdentityCannotEvictOthers is the attack on a bound of sessions: one
// token holder signs in 10,000 times. Bob, who signed in first, must stay
// signed in. Sessions are sealed in their cookies, so the console keeps
// nothing per sign-in that could fill up: neither a store (the promise once
// kept by a per-user cap) nor revocations (sign-in revokes only a session the
// same browser already had).
func TestOneIdentityCannotEvictOthers(t *testing.T) {
	sessions := NewSessions()
	rev := NewMemoryRevoker(0)
	sessions.Revocations = rev
	g := &Gate{Mode: ModeToken, Sessions: sessions}
	signIn := func(user string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		if err := g.SignIn(rec, requestWith(nil), kube.Identity{User: user, Act: kube.ActWithToken, Token: user + "-token"}); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	bob := cookieFrom(t, signIn("bob"))
	alice := cookieFrom(t, signIn("alice"))
	for range 10000 {
		signIn("alice")
	}
	if id, err := g.Identify(httptest.NewRecorder(), requestWith(bob)); err != nil || id.User != "bob" || id.Token != "bob-token" {
		t.Fatalf("after alice signed in 10,000 times, bob's session is gone: %+v, %v", id, err)
	}
	if id, err := g.Identify(httptest.NewRecorder(), requestWith(alice)); err != nil || id.User != "alice" {
		t.Fatalf("alice's own first session: %+v, %v", id, err)
	}
	if n := rev.Len(); n != 0 {
		t.Errorf("10,000 sign-ins left %d revocations", n)
	}
}
