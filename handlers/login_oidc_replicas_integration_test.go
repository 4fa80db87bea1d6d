//go:build integration

package handlers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// replicaSessions is one replica's sessions: keys read from keyDir (as from
// a mounted Secret, --session-keys) and sign-outs shared through Leases in ns.
func replicaSessions(t *testing.T, keyDir, ns string, console *rest.Config) *auth.Sessions {
	t.Helper()
	keys, err := auth.LoadKeys(keyDir)
	if err != nil {
		t.Fatal(err)
	}
	sessions := auth.NewSessionsWithKeys(keys)
	revocations, err := kube.NewRevocations(console, ns)
	if err != nil {
		t.Fatal(err)
	}
	shared := auth.NewSharedRevoker(revocations, sessions.Absolute)
	sessions.Revocations = shared
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	synced, err := revocations.Watch(ctx, shared)
	if err != nil {
		t.Fatal(err)
	}
	shared.SetReady(synced)
	go shared.Run(ctx)
	waitFor(t, "the sign-outs watch to list and deliver a heartbeat", 30*time.Second, shared.Ready)
	return sessions
}

// csrsAsAlice opens the CSR queue and fails the test unless the API server
// let alice read it (the page has no forbidden banner).
func csrsAsAlice(t *testing.T, b *oidcBrowser, where string) {
	t.Helper()
	rec := b.get(urls.CSRs)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s on %s: %d %s", urls.CSRs, where, rec.Code, loginMessage(t, rec.Body.String()))
	}
	doc, _ := goquery.NewDocumentFromReader(rec.Body)
	if doc.Find(`[data-testid="banner-forbidden"]`).Length() != 0 {
		t.Fatalf("the CSR queue on %s is forbidden to alice: the session's ID token was not accepted", where)
	}
}

// Stateless replicas with OIDC (issue 17, items 1 and 3): two consoles
// sharing a key directory and the cluster's sign-outs, nothing else. Alice
// signs in on A and uses the session on B; B renews her 10-second ID token
// (the provider rotates the refresh token) and seals the result into her
// cookie, with which A goes on and renews again; her logout on B is refused
// on A.
func TestOIDCReplicasShareSessionsAndRenewals(t *testing.T) {
	ns, console := consoleNamespace(t)
	keyDir := t.TempDir()
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keyDir, "key-0"), []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newOIDCReplica(t, testcluster.OIDCClientShortLived, "", replicaSessions(t, keyDir, ns, console))
	b := newOIDCReplica(t, testcluster.OIDCClientShortLived, "", replicaSessions(t, keyDir, ns, console))

	alice := a.browser(t)
	alice.signIn(t, "alice")
	first := alice.sealed(t)
	if first.Creds.IDToken == "" || first.Creds.RefreshToken == "" {
		t.Fatal("A sealed no ID and refresh token into the cookie")
	}

	alice.oc = b
	csrsAsAlice(t, alice, "B")
	waitFor(t, "B to renew the ID token A got", time.Minute, func() bool {
		csrsAsAlice(t, alice, "B")
		return alice.sealed(t).Creds.IDToken != first.Creds.IDToken
	})
	onB := alice.sealed(t)
	if onB.ID != first.ID || onB.Creds.RefreshToken == first.Creds.RefreshToken || !onB.Creds.Expiry.After(first.Creds.Expiry) {
		t.Fatalf("B's renewal: same session %v, refresh token rotated %v, later expiry %v",
			onB.ID == first.ID, onB.Creds.RefreshToken != first.Creds.RefreshToken, onB.Creds.Expiry.After(first.Creds.Expiry))
	}

	// Back on A, past the first token's expiry: A acts with B's renewal and
	// renews with the refresh token B got.
	alice.oc = a
	waitFor(t, "A to renew the ID token B got", time.Minute, func() bool {
		csrsAsAlice(t, alice, "A")
		return alice.sealed(t).Creds.IDToken != onB.Creds.IDToken && time.Now().After(first.Creds.Expiry)
	})
	if now := alice.sealed(t); now.ID != first.ID || now.Creds.RefreshToken == onB.Creds.RefreshToken {
		t.Fatalf("A's renewal: same session %v, refresh token rotated %v", now.ID == first.ID, now.Creds.RefreshToken != onB.Creds.RefreshToken)
	}

	// Logout on B holds on A (through the cluster: poll, no claim on speed).
	saved := alice.session()
	alice.oc = b
	if rec := alice.post(t, urls.Logout, nil); rec.Code != http.StatusOK {
		t.Fatalf("logout on B: %d", rec.Code)
	}
	waitFor(t, "A to refuse the signed-out cookie", 60*time.Second, func() bool {
		r := httptest.NewRequest(http.MethodGet, urls.CSRs, nil)
		r.AddCookie(saved)
		return a.do(r).Code == http.StatusUnauthorized
	})
}
