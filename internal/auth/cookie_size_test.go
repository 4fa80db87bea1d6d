package auth

import (
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"
)

// jwt makes a token shaped like a real signed JWT: base64url JSON header and
// claims, and a random RS256-sized signature (random, so nothing compresses
// it better than a real one).
func jwt(t *testing.T, claims map[string]any) string {
	t.Helper()
	h, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": "b3f1c2a9d8e7f6a5b4c3d2e1f0a9b8c7", "typ": "JWT"})
	c, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(h) + "." + enc.EncodeToString(c) + "." + enc.EncodeToString(randomKey(256))
}

// TestOIDCSessionFitsTheCookieLimit measures the session cookie of an OIDC
// sign-in: an ID token (1.2 KB, 18 groups) and a JWT refresh token (0.7 KB)
// must fit in one cookie of at most 4096 bytes, name included (3.4 KB
// measured); with twice as many, longer groups (a 3.4 KB pair) it is
// deflated or split, and still opens.
func TestOIDCSessionFitsTheCookieLimit(t *testing.T) {
	groups := []string{"platform-admins", "sre-oncall", "k8s-cluster-operators", "team-payments", "team-search",
		"security-auditors", "release-managers", "db-readonly", "observability", "ci-runners", "docs-writers", "everyone",
		"team-identity", "team-storage", "network-admins", "cost-reporting", "incident-commanders", "vpn-users"}
	now := time.Now()
	idToken := jwt(t, map[string]any{"iss": "https://dex.devcluster.local:5556/dex", "sub": "CgVhbGljZRIFbG9jYWw", "aud": "clusterdesk",
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "nonce": "n-0S6_WzA2Mj", "at_hash": "HK6E_P6Dh8Y93mRNtsDB1Q",
		"email": "alice.longname@example.com", "email_verified": true, "name": "Alice Longname", "groups": groups})
	refresh := jwt(t, map[string]any{"iss": "https://dex.devcluster.local:5556/dex", "sub": "CgVhbGljZRIFbG9jYWw", "aud": "clusterdesk",
		"exp": now.Add(24 * time.Hour).Unix(), "iat": now.Unix(), "jti": "6f1c2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f", "typ": "Refresh"})
	s := NewSessionsWithKeys(RandomKeys())
	s.Secure = true
	measure := func(idToken, refresh string) int {
		rec := httptest.NewRecorder()
		sess := Session{User: "alice.longname@example.com", Groups: groups,
			Creds: Credentials{Token: idToken, IDToken: idToken, RefreshToken: refresh, Expiry: now.Add(time.Hour)}}
		// The OIDC sign-in sends the ID token as the bearer token: keep it once.
		sess.Creds.Token = ""
		if _, err := s.StartWith(rec, nil, sess); err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("GET", "/", nil)
		for _, c := range rec.Result().Cookies() {
			if n := len(c.Name) + len(c.Value); n > 4096 {
				t.Fatalf("cookie %s holds %d bytes", c.Name, n)
			}
			r.AddCookie(c)
		}
		if got, err := s.Peek(r); err != nil || got.Creds.IDToken != idToken || got.Creds.RefreshToken != refresh {
			t.Fatalf("the OIDC session did not open whole: %v", err)
		}
		total := 0
		for _, c := range rec.Result().Cookies() {
			total += len(c.Name) + len(c.Value)
		}
		t.Logf("ID token %d + refresh token %d bytes: %d cookie(s), %d bytes", len(idToken), len(refresh), len(rec.Result().Cookies()), total)
		return len(rec.Result().Cookies())
	}
	if n := measure(idToken, refresh); n != 1 {
		t.Errorf("a %d-byte OIDC token pair takes %d cookies, want 1", len(idToken)+len(refresh), n)
	}
	groups = append(groups, groups...)
	for i := range groups {
		groups[i] += "-with-a-longer-directory-name"
	}
	big := jwt(t, map[string]any{"iss": "https://dex.devcluster.local:5556/dex", "sub": "CgVhbGljZRIFbG9jYWw", "groups": groups})
	measure(big, refresh)
}
