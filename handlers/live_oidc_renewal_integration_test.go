//go:build integration

package handlers

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// An OIDC renewal made by an /events request reaches the browser (issue 25,
// 7b). The provider rotates refresh tokens: the renewal spends the one in the
// cookie. /events used to delete every Set-Cookie (so that an open tab would
// not refresh the idle clock), so the browser kept the spent token; the
// replica that renewed went on with the renewal it remembered, and any other
// replica tried the spent token once the ID token ran out, and signed the
// person out. Now the stream sends the renewal's cookie, with the idle clock
// as the request had it; replica B, past the first ID token's expiry, acts
// with the rotated refresh token.
func TestOIDCRenewalOnTheEventStreamReachesTheBrowser(t *testing.T) {
	ns, console := consoleNamespace(t)
	keyDir := t.TempDir()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keyDir, "key-0"), []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newOIDCReplica(t, testcluster.OIDCClientShortLived, "", replicaSessions(t, keyDir, ns, console), func(d *Deps) {
		_, withLive := liveDeps(t, d.Cluster, live.Options{})
		withLive(d)
	})
	b := newOIDCReplica(t, testcluster.OIDCClientShortLived, "", replicaSessions(t, keyDir, ns, console))
	srvA := httptest.NewServer(a.e)
	t.Cleanup(srvA.Close)

	alice := a.browser(t)
	alice.signIn(t, "alice")
	first := alice.sealed(t)
	if first.Creds.RefreshToken == "" {
		t.Fatal("sign-in sealed no refresh token")
	}
	// The short-lived client's ID tokens last 10 s and are renewed in their
	// second half (OIDCSession.RenewAt): wait until that has begun. Not a
	// timed assertion: the renewal is due only then.
	time.Sleep(time.Until(first.Creds.Expiry.Add(-2 * time.Second)))

	// The tab's stream is the first request after the token is due: it renews.
	tb := openTab(t, srvA.URL, alice.allCookies)
	if tb.first.Event != live.HelloEvent {
		t.Fatalf("/events after the ID token was due: first event %q", tb.first.Event)
	}
	// As the browser does with what the stream's response sets (a large
	// session comes in parts, auth/cookie_parts.go).
	got := false
	for _, c := range tb.resp.Cookies() {
		if c.MaxAge < 0 {
			delete(alice.cookies, c.Name)
			continue
		}
		alice.cookies[c.Name] = c
		got = got || c.Name == auth.CookieName
	}
	if !got {
		t.Fatalf("the stream whose request renewed the ID token sent no session cookie (Set-Cookie %q): the browser keeps a spent refresh token",
			tb.resp.Header.Values("Set-Cookie"))
	}
	renewed := alice.sealed(t)
	if renewed.ID != first.ID || renewed.Creds.IDToken == first.Creds.IDToken || renewed.Creds.RefreshToken == first.Creds.RefreshToken {
		t.Fatalf("the stream's cookie: same session %v, ID token renewed %v, refresh token rotated %v",
			renewed.ID == first.ID, renewed.Creds.IDToken != first.Creds.IDToken, renewed.Creds.RefreshToken != first.Creds.RefreshToken)
	}
	if !renewed.LastSeen.Equal(first.LastSeen) {
		t.Errorf("the stream moved the idle clock from %v to %v: an open tab is not activity", first.LastSeen, renewed.LastSeen)
	}
	tb.close()

	// On B once the first ID token has expired: with the spent refresh token
	// B could not renew and would sign alice out.
	time.Sleep(time.Until(first.Creds.Expiry) + 100*time.Millisecond)
	alice.oc = b
	csrsAsAlice(t, alice, "B, past the first ID token's expiry")
	// And B renews in its turn with the refresh token the stream's cookie
	// brought (the provider refuses a spent one).
	waitFor(t, "B to renew the stream's renewal", time.Minute, func() bool {
		csrsAsAlice(t, alice, "B")
		return alice.sealed(t).Creds.IDToken != renewed.Creds.IDToken
	})
	if now := alice.sealed(t); now.ID != first.ID || now.Creds.RefreshToken == renewed.Creds.RefreshToken {
		t.Fatalf("B's renewal: same session %v, refresh token rotated %v", now.ID == first.ID, now.Creds.RefreshToken != renewed.Creds.RefreshToken)
	}
}

// allCookies adds every cookie the browser holds for the console.
func (b *oidcBrowser) allCookies(r *http.Request) {
	for _, c := range b.cookies {
		r.AddCookie(c)
	}
}
