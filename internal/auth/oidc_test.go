package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// closedIssuer has endpoints on a port nothing listens on: every call to it
// fails the way a provider that is down does.
const closedIssuer = "https://127.0.0.1:1"

// testOIDC is a relying party whose discovery is done already (from a
// static configuration, no network), so the checks before any call to the
// issuer can be tested alone.
func testOIDC(t *testing.T) *OIDC {
	t.Helper()
	o, err := NewOIDC(OIDCConfig{Issuer: closedIssuer, ClientID: "clusterdesk", ClientSecret: "s3cret",
		RedirectURL: "http://127.0.0.1:8080/login/oidc/callback"})
	if err != nil {
		t.Fatal(err)
	}
	p := (&oidc.ProviderConfig{IssuerURL: closedIssuer, AuthURL: closedIssuer + "/authorize",
		TokenURL: closedIssuer + "/oauth/token", JWKSURL: closedIssuer + "/keys"}).NewProvider(context.Background())
	o.oauth = &oauth2.Config{ClientID: "clusterdesk", ClientSecret: "s3cret", Endpoint: p.Endpoint(),
		RedirectURL: o.cfg.RedirectURL, Scopes: o.cfg.Scopes}
	o.verifier = p.Verifier(&oidc.Config{ClientID: "clusterdesk"})
	return o
}

func TestNewOIDCRefusesSettingsThatCannotWork(t *testing.T) {
	ok := OIDCConfig{Issuer: "https://idp.example", ClientID: "c", ClientSecret: "s", RedirectURL: "https://console.example/login/oidc/callback"}
	for name, mutate := range map[string]func(*OIDCConfig){
		"no issuer":         func(c *OIDCConfig) { c.Issuer = "" },
		"relative issuer":   func(c *OIDCConfig) { c.Issuer = "idp.example" },
		"plain http remote": func(c *OIDCConfig) { c.Issuer = "http://idp.example" },
		"no client id":      func(c *OIDCConfig) { c.ClientID = "" },
		"no secret":         func(c *OIDCConfig) { c.ClientSecret = "" },
		"no redirect":       func(c *OIDCConfig) { c.RedirectURL = "" },
		"redirect not http": func(c *OIDCConfig) { c.RedirectURL = "javascript:alert(1)" },
		"redirect no host":  func(c *OIDCConfig) { c.RedirectURL = "/login/oidc/callback" },
	} {
		c := ok
		mutate(&c)
		if _, err := NewOIDC(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	o, err := NewOIDC(OIDCConfig{Issuer: "http://127.0.0.1:5556", ClientID: "c", ClientSecret: "s",
		RedirectURL: "http://127.0.0.1/cb", Scopes: []string{"email"}})
	if err != nil {
		t.Fatalf("plain http on loopback: %v", err)
	}
	if o.cfg.Scopes[0] != oidc.ScopeOpenID || o.cfg.GroupsClaim != "groups" {
		t.Errorf("scopes %v, groups claim %q: openid must be asked for, groups is the default claim", o.cfg.Scopes, o.cfg.GroupsClaim)
	}
}

// A flight's secrets reach the provider only as the authorize URL carries
// them: the state and nonce as they are, the PKCE verifier only as its S256
// challenge.
func TestAuthCodeURLCarriesStateNonceAndS256Challenge(t *testing.T) {
	o := testOIDC(t)
	s := NewSessions()
	rec := httptest.NewRecorder()
	f, err := s.newOIDCFlight(rec)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := o.authCodeURL(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(raw)
	q := u.Query()
	sum := sha256.Sum256([]byte(f.Verifier))
	for k, want := range map[string]string{
		"state": f.State, "nonce": f.Nonce, "code_challenge_method": "S256",
		"code_challenge": base64.RawURLEncoding.EncodeToString(sum[:]),
		"client_id":      "clusterdesk", "response_type": "code",
		"redirect_uri": "http://127.0.0.1:8080/login/oidc/callback",
	} {
		if got := q.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if strings.Contains(raw, f.Verifier) {
		t.Error("the authorize URL carries the PKCE verifier itself")
	}
	if !strings.Contains(q.Get("scope"), "offline_access") {
		t.Errorf("scope %q asks for no refresh token", q.Get("scope"))
	}
	g := httptest.NewRecorder()
	f2, _ := s.newOIDCFlight(g)
	if f2.State == f.State || f2.Nonce == f.Nonce || f2.Verifier == f.Verifier {
		t.Error("two flights share a secret")
	}
}

func TestFlightCookieIsSealedLaxShortLivedAndSpentOnce(t *testing.T) {
	s := NewSessions()
	rec := httptest.NewRecorder()
	f, err := s.newOIDCFlight(rec)
	if err != nil {
		t.Fatal(err)
	}
	c := rec.Result().Cookies()[0]
	if c.Name != oidcFlightCookie || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.MaxAge != 600 {
		t.Errorf("flight cookie %+v: want HttpOnly, SameSite=Lax (the callback is a cross-site navigation), 10 min", c)
	}
	for _, secret := range []string{f.State, f.Nonce, f.Verifier} {
		if strings.Contains(c.Value, secret) {
			t.Fatal("the flight cookie shows its secrets: it must be sealed")
		}
	}

	r := httptest.NewRequest(http.MethodGet, "/login/oidc/callback", nil)
	r.AddCookie(c)
	w := httptest.NewRecorder()
	got, ok := s.takeOIDCFlight(w, r)
	if !ok || got.State != f.State || got.Nonce != f.Nonce || got.Verifier != f.Verifier || !got.IssuedAt.Equal(f.IssuedAt) {
		t.Fatalf("flight back %+v %v, want %+v", got, ok, f)
	}
	if cl := w.Result().Cookies(); len(cl) != 1 || cl[0].MaxAge >= 0 {
		t.Errorf("taking the flight must clear its cookie, got %v", cl)
	}

	// Another console's keys, a changed byte, an old flight: none opens.
	other := NewSessions()
	if _, ok := other.takeOIDCFlight(httptest.NewRecorder(), r); ok {
		t.Error("a flight sealed with other keys was accepted")
	}
	bad := httptest.NewRequest(http.MethodGet, "/", nil)
	bad.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value[:len(c.Value)-2] + "AA"})
	if _, ok := s.takeOIDCFlight(httptest.NewRecorder(), bad); ok {
		t.Error("a tampered flight cookie was accepted")
	}
	s.now = func() time.Time { return time.Now().Add(oidcFlightLife + time.Minute) }
	if _, ok := s.takeOIDCFlight(httptest.NewRecorder(), r); ok {
		t.Error("a flight older than its life was accepted")
	}
}

// The callback's checks that need no network: each wrong answer is refused
// with its own kind before the issuer (here: unreachable) is asked anything.
func TestFinishRefusesBadCallbacksBeforeAskingTheIssuer(t *testing.T) {
	o := testOIDC(t)
	f := oidcFlight{State: "the-state", Nonce: "n", Verifier: "v", IssuedAt: time.Now()}
	for _, tc := range []struct {
		name       string
		query      string
		haveFlight bool
		want       OIDCErrorKind
	}{
		{"denied consent", "error=access_denied&state=the-state", true, OIDCDenied},
		{"denied even without flight", "error=access_denied", false, OIDCDenied},
		{"other provider error", "error=server_error&error_description=boom&state=the-state", true, OIDCProviderError},
		{"no flight (replayed or finished)", "state=the-state&code=c", false, OIDCStateMissing},
		{"other state (CSRF)", "state=someone-elses&code=c", true, OIDCStateMismatch},
		{"no state", "code=c", true, OIDCStateMismatch},
		{"state prefix", "state=the-stat&code=c", true, OIDCStateMismatch},
		{"no code", "state=the-state", true, OIDCProviderError},
		{"right state, issuer down", "state=the-state&code=c", true, OIDCIssuerUnreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			_, err := o.finish(context.Background(), q, f, tc.haveFlight)
			if got := OIDCKind(err); got != tc.want {
				t.Errorf("kind %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}

func TestProviderErrorTextIsBounded(t *testing.T) {
	got := providerErrorText("server_error", strings.Repeat("x", 5000)+"\xff")
	if len(got) > 210 || !strings.HasPrefix(got, "server_error: x") {
		t.Errorf("len %d %q", len(got), got[:30])
	}
}

func TestCheckNonce(t *testing.T) {
	for _, tc := range []struct {
		token, want string
		ok          bool
	}{
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"", "abc", false},
		{"", "", false}, // a flight always has a nonce: an empty one is no match
	} {
		err := checkNonce(&oidc.IDToken{Nonce: tc.token}, tc.want)
		if (err == nil) != tc.ok || (err != nil && OIDCKind(err) != OIDCNonceMismatch) {
			t.Errorf("token nonce %q, flight nonce %q: %v", tc.token, tc.want, err)
		}
	}
}

func TestGroupsClaimTakesListOrString(t *testing.T) {
	claims := map[string]any{"groups": []any{"a", "b", 3}, "team": "ops", "n": 5.0}
	if got := groupsClaim(claims, "groups"); strings.Join(got, ",") != "a,b" {
		t.Errorf("list: %v", got)
	}
	if got := groupsClaim(claims, "team"); strings.Join(got, ",") != "ops" {
		t.Errorf("string: %v", got)
	}
	if got := groupsClaim(claims, "n"); got != nil {
		t.Errorf("number: %v", got)
	}
	if got := groupsClaim(claims, "missing"); got != nil {
		t.Errorf("missing: %v", got)
	}
}

func TestRenewAtLeavesAMarginBeforeExpiry(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		life, margin time.Duration
	}{
		{time.Hour, time.Minute},
		{10 * time.Second, 5 * time.Second},
		{2 * time.Minute, time.Minute},
	} {
		o := OIDCSession{IssuedAt: at, Expiry: at.Add(tc.life)}
		if got := o.Expiry.Sub(o.RenewAt()); got != tc.margin {
			t.Errorf("life %v: renews %v before expiry, want %v", tc.life, got, tc.margin)
		}
	}
	if o := (OIDCSession{Expiry: at}); !o.RenewAt().Equal(at) {
		t.Error("without iat, renew at expiry")
	}
}

// idToken is a JWT-shaped ID token for alice issued at iat (the gate reads
// sub and iat back from the sealed cookie; the signature was go-oidc's to check).
func idToken(t *testing.T, iat time.Time) string {
	return jwt(t, map[string]any{"iss": "https://127.0.0.1:1", "sub": "alice", "aud": "clusterdesk", "iat": iat.Unix(), "exp": iat.Add(time.Hour).Unix()})
}

// An OIDC session lives in the sealed cookie alone: its tokens are not
// readable there, and a second replica with the same keys (and nothing
// else) acts with the same ID token.
func TestOIDCSessionIsSealedInTheCookie(t *testing.T) {
	now := time.Now()
	tok := idToken(t, now)
	keys := RandomKeys()
	g := &Gate{Mode: ModeOIDC, Sessions: NewSessionsWithKeys(keys), OIDC: testOIDC(t)}
	rec := httptest.NewRecorder()
	o := OIDCSession{IDToken: tok, RefreshToken: "refresh-secret", IssuedAt: now, Expiry: now.Add(time.Hour), Subject: "alice"}
	if err := g.SignInOIDC(rec, httptest.NewRequest(http.MethodGet, "/", nil), kube.Identity{User: "oidc:alice", Groups: []string{"oidc:devs"}}, o); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, c := range rec.Result().Cookies() {
		if strings.Contains(c.Value, "refresh-secret") || strings.Contains(c.Value, strings.Split(tok, ".")[1]) {
			t.Fatal("the session cookie shows the tokens: it must be sealed")
		}
		r.AddCookie(c)
	}
	sess, err := g.Sessions.Peek(r)
	if err != nil || sess.Creds.Token != "" || sess.Creds.IDToken != tok || sess.Creds.RefreshToken != "refresh-secret" || !sess.Creds.Expiry.Equal(o.Expiry) {
		t.Fatalf("sealed session %+v (%v): want the ID token once, the refresh token and expiry", sess, err)
	}
	back, ok := oidcOf(sess.Creds)
	if !ok || back.Subject != "alice" || back.IssuedAt.Unix() != now.Unix() || back.RefreshToken != "refresh-secret" {
		t.Errorf("read back %+v %v: want alice's subject and iat", back, ok)
	}
	replica := &Gate{Mode: ModeOIDC, Sessions: NewSessionsWithKeys(keys), OIDC: testOIDC(t)}
	id, _, err := replica.IdentifySession(httptest.NewRecorder(), r)
	if err != nil || id.Token != tok || id.User != "oidc:alice" || len(id.Groups) != 1 || id.Act != kube.ActWithToken {
		t.Fatalf("another replica: %v, %v; want alice acting with her ID token", id, err)
	}
	other := &Gate{Mode: ModeOIDC, Sessions: NewSessions(), OIDC: testOIDC(t)}
	if _, _, err := other.IdentifySession(httptest.NewRecorder(), r); !errors.Is(err, ErrNoSession) {
		t.Errorf("a console with other keys: %v, want ErrNoSession", err)
	}
	if _, ok := oidcOf(Credentials{Token: "pasted"}); ok {
		t.Error("a token-mode session read as an OIDC one")
	}
}

// Requests that still carry the cookie a renewal replaced take that
// renewal; the memory of renewals is bounded.
func TestRecentRenewalsAreFoundUntilTheyExpireAndBounded(t *testing.T) {
	var r recentRenewals
	now := time.Now()
	next := OIDCSession{IDToken: "new", Expiry: now.Add(time.Minute)}
	r.put("s1", "old", next, now)
	if got, ok := r.get("s1", "old", now); !ok || got.IDToken != "new" {
		t.Fatalf("get: %+v %v", got, ok)
	}
	if _, ok := r.get("s2", "old", now); ok {
		t.Error("another session's renewal was found")
	}
	if _, ok := r.get("s1", "old", now.Add(time.Minute)); ok {
		t.Error("an expired renewal was found")
	}
	for i := range maxRecentRenewals + 10 {
		r.put(fmt.Sprint("s", i), "old", next, now)
	}
	if len(r.m) > maxRecentRenewals {
		t.Errorf("%d renewals kept, bound %d", len(r.m), maxRecentRenewals)
	}
}

// oidcGate signs a browser in with o (no provider involved) and returns the
// gate and the signed-in request.
func oidcGate(t *testing.T, o OIDCSession) (*Gate, *http.Request) {
	t.Helper()
	g := &Gate{Mode: ModeOIDC, Sessions: NewSessions(), OIDC: testOIDC(t)}
	if err := g.Check(); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := g.SignInOIDC(rec, httptest.NewRequest(http.MethodGet, "/", nil), kube.Identity{User: "oidc:alice"}, o); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	for _, c := range rec.Result().Cookies() {
		r.AddCookie(c)
	}
	return g, r
}

func TestOIDCSessionActsWithItsIDToken(t *testing.T) {
	now := time.Now()
	tok := idToken(t, now)
	g, r := oidcGate(t, OIDCSession{IDToken: tok, RefreshToken: "r", IssuedAt: now, Expiry: now.Add(time.Hour), Subject: "alice"})
	id, sess, err := g.IdentifySession(httptest.NewRecorder(), r)
	if err != nil || id.Token != tok || id.Act != kube.ActWithToken || id.User != "oidc:alice" || sess.ID == "" {
		t.Fatalf("identity %v (token %q), session %+v, err %v", id, id.Token, sess, err)
	}
}

// A renewal that fails (the provider is down) keeps a token that is still
// valid; once the token has expired, the session ends with ErrNotRenewed.
func TestFailedRenewalEndsTheSessionOnlyOnceTheTokenExpired(t *testing.T) {
	now := time.Now()
	tok := idToken(t, now.Add(-time.Hour))
	g, r := oidcGate(t, OIDCSession{IDToken: tok, RefreshToken: "r", IssuedAt: now.Add(-time.Hour), Expiry: now.Add(30 * time.Second), Subject: "alice"})
	id, _, err := g.IdentifySession(httptest.NewRecorder(), r)
	if err != nil || id.Token != tok {
		t.Fatalf("renewal due, provider down, token valid: %v, %v; want the session as it is", id, err)
	}

	g.OIDC.now = func() time.Time { return now.Add(time.Minute) }
	w := httptest.NewRecorder()
	_, _, err = g.IdentifySession(w, r)
	if !errors.Is(err, ErrNotRenewed) || OIDCKind(err) != OIDCIssuerUnreachable {
		t.Fatalf("expired, renewal failed: %v, want ErrNotRenewed (issuer unreachable)", err)
	}
	if cl := w.Result().Cookies(); len(cl) != 1 || cl[0].MaxAge >= 0 {
		t.Errorf("the session cookie must be cleared, got %v", cl)
	}
}

func TestRenewalWithoutRefreshTokenFails(t *testing.T) {
	_, err := testOIDC(t).refresh(context.Background(), OIDCSession{IDToken: "x"})
	if OIDCKind(err) != OIDCRefreshFailed {
		t.Errorf("%v, want refresh-failed", err)
	}
}
