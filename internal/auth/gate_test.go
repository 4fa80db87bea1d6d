package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

func TestParseMode(t *testing.T) {
	for _, s := range []string{"local", "token", "proxy", "oidc"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	for _, s := range []string{"", "saml", "Token", "OIDC"} {
		if _, err := ParseMode(s); err == nil {
			t.Errorf("ParseMode(%q) accepted", s)
		}
	}
}

// In token mode the bearer token travels sealed in the cookie: the browser
// holds it but cannot read it, and a replaced or signed-out session's cookie
// no longer works although it still carries the token.
func TestGateTokenModeSealsTheTokenInTheCookie(t *testing.T) {
	sessions := NewSessions()
	g := &Gate{Mode: ModeToken, Sessions: sessions}
	if err := g.Check(); err != nil {
		t.Fatal(err)
	}
	id := kube.Identity{User: "auditor", Groups: []string{"system:authenticated"}, Act: kube.ActWithToken, Token: "secret-bearer-token"}
	rec := httptest.NewRecorder()
	if err := g.SignIn(rec, requestWith(nil), id); err != nil {
		t.Fatal(err)
	}
	cookie := cookieFrom(t, rec)
	for _, secret := range []string{id.Token, "c2VjcmV0LWJlYXJlci10b2tlbg", "auditor"} {
		if strings.Contains(cookie.Value, secret) {
			t.Fatalf("the cookie shows %q: %s", secret, cookie.Value)
		}
	}
	if !cookie.HttpOnly {
		t.Error("the cookie is readable by scripts")
	}

	// Signing in again from the same browser ends the first session.
	again := httptest.NewRecorder()
	if err := g.SignIn(again, requestWith(cookie), id); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Identify(httptest.NewRecorder(), requestWith(cookie)); err == nil {
		t.Fatal("the replaced session still works")
	}
	cookie = cookieFrom(t, again)
	sess, err := sessions.Peek(requestWith(cookie))
	if err != nil || sess.Creds.Token != id.Token || sess.User != "auditor" {
		t.Fatalf("cookie session %+v %v", sess, err)
	}
	if printed := fmt.Sprintf("%v %+v %#v", sess, sess, sess); strings.Contains(printed, id.Token) {
		t.Fatalf("printing a session shows its token: %s", printed)
	}

	got, err := g.Identify(httptest.NewRecorder(), requestWith(cookie))
	if err != nil || got.Token != id.Token || got.User != "auditor" || !slices.Equal(got.Groups, id.Groups) || got.Act != kube.ActWithToken {
		t.Fatalf("Identify = %+v, %v", got, err)
	}

	out := httptest.NewRecorder()
	if _, err := g.SignOut(out, requestWith(cookie)); err != nil {
		t.Fatal(err)
	}
	if c := out.Result().Cookies(); len(c) != 1 || c[0].MaxAge >= 0 {
		t.Fatalf("sign-out should clear the cookie: %+v", c)
	}
	if _, err := g.Identify(httptest.NewRecorder(), requestWith(cookie)); !errors.Is(err, ErrSignedOut) {
		t.Fatalf("after sign-out the old cookie still works: %v", err)
	}
	if _, err := g.Identify(httptest.NewRecorder(), requestWith(nil)); !errors.Is(err, ErrNoSession) {
		t.Fatalf("no cookie: %v", err)
	}
}

func TestGateLocalModeActsAsTheConsole(t *testing.T) {
	sessions := NewSessions()
	g := &Gate{Mode: ModeLocal, Sessions: sessions}
	rec := httptest.NewRecorder()
	if err := sessions.Start(rec, "admin"); err != nil {
		t.Fatal(err)
	}
	id, err := g.Identify(httptest.NewRecorder(), requestWith(cookieFrom(t, rec)))
	if err != nil || id.User != "admin" || id.Act != kube.ActAsConsole || id.Token != "" {
		t.Fatalf("Identify = %+v, %v", id, err)
	}
	if err := g.SignIn(httptest.NewRecorder(), requestWith(nil), kube.Identity{User: "x", Token: "t"}); err == nil {
		t.Fatal("token sign-in accepted in local mode")
	}
}

func TestSecureSessionsUseTheHostPrefix(t *testing.T) {
	s := NewSessions()
	s.Secure = true
	rec := httptest.NewRecorder()
	if err := s.Start(rec, "alice"); err != nil {
		t.Fatal(err)
	}
	c := rec.Result().Cookies()[0]
	if c.Name != "__Host-clusterdesk_session" || !c.Secure || !c.HttpOnly || c.Path != "/" || c.Domain != "" || c.SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie %+v", c)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.AddCookie(c)
	if sess, err := s.Check(httptest.NewRecorder(), r); err != nil || sess.User != "alice" {
		t.Fatalf("Check = %+v, %v", sess, err)
	}
}

func TestProxyTrustsOnlyTheSecretOrTheClientCA(t *testing.T) {
	if err := (&Gate{Mode: ModeProxy, Proxy: &Proxy{UserHeader: "X-Forwarded-User"}}).Check(); !errors.Is(err, ErrNoTrust) {
		t.Fatalf("proxy mode without trust: %v", err)
	}
	if err := (&Gate{Mode: ModeProxy}).Check(); !errors.Is(err, ErrNoTrust) {
		t.Fatalf("proxy mode without proxy: %v", err)
	}

	caCert, caKey := newCA(t, "proxy CA")
	otherCert, otherKey := newCA(t, "other CA")
	good := leaf(t, caCert, caKey, x509.ExtKeyUsageClientAuth)
	bad := leaf(t, otherCert, otherKey, x509.ExtKeyUsageClientAuth)
	serverOnly := leaf(t, caCert, caKey, x509.ExtKeyUsageServerAuth)
	pool := x509.NewCertPool()
	pool.AddCert(caCert)

	p := &Proxy{UserHeader: "X-Forwarded-User", GroupsHeader: "X-Forwarded-Groups", SecretHeader: "X-Proxy-Secret",
		Secret: []byte("0123456789abcdef-secret"), ClientCAs: pool, ClientNames: []string{"oauth2-proxy"}}
	g := &Gate{Mode: ModeProxy, Proxy: p}
	if err := g.Check(); err != nil {
		t.Fatal(err)
	}

	req := func(secret string, cert *x509.Certificate) *http.Request {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "127.0.0.1:40000" // the proxy beside the console (proxy_test.go: other peers)
		r.Header.Set("X-Forwarded-User", "alice@example.com")
		r.Header.Add("X-Forwarded-Groups", "team-a, team-b")
		r.Header.Add("X-Forwarded-Groups", "ops")
		if secret != "" {
			r.Header.Set("X-Proxy-Secret", secret)
		}
		if cert != nil {
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
		}
		return r
	}
	for _, tc := range []struct {
		name  string
		r     *http.Request
		trust bool
	}{
		{"right secret", req("0123456789abcdef-secret", nil), true},
		{"client cert from the CA", req("", good), true},
		{"no secret, no cert", req("", nil), false},
		{"wrong secret", req("0123456789abcdef-secreT", nil), false},
		{"secret prefix", req("0123456789abcdef", nil), false},
		{"cert from another CA", req("", bad), false},
		{"server-only cert from the CA", req("", serverOnly), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := g.Identify(httptest.NewRecorder(), tc.r)
			if !tc.trust {
				if !errors.Is(err, ErrUntrusted) || id.User != "" {
					t.Fatalf("untrusted request identified as %+v (%v)", id, err)
				}
				return
			}
			want := []string{"team-a", "team-b", "ops"}
			if err != nil || id.User != "alice@example.com" || !slices.Equal(id.Groups, want) || id.Act != kube.ActImpersonating || id.Token != "" {
				t.Fatalf("Identify = %+v, %v", id, err)
			}
		})
	}
	noUser := req("0123456789abcdef-secret", nil)
	noUser.Header.Del("X-Forwarded-User")
	if _, err := g.Identify(httptest.NewRecorder(), noUser); !errors.Is(err, ErrNoProxyUser) {
		t.Fatalf("trusted request without user: %v", err)
	}
}

func requestWith(c *http.Cookie) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	if c != nil {
		r.AddCookie(c)
	}
	return r
}

func newCA(t *testing.T, cn string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func leaf(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, usage x509.ExtKeyUsage) *x509.Certificate {
	t.Helper()
	return leafNamed(t, ca, caKey, usage, "oauth2-proxy")
}

// leafNamed is a certificate for cn signed by ca.
func leafNamed(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, usage x509.ExtKeyUsage, cn string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestGateTokenModeEndsSessionsWhoseTokenIsRejected(t *testing.T) {
	sessions := NewSessions()
	clock := time.Unix(5000, 0)
	sessions.now = func() time.Time { return clock }
	valid := true
	checks := 0
	g := &Gate{Mode: ModeToken, Sessions: sessions, RecheckEvery: 5 * time.Minute,
		Recheck: func(_ context.Context, token string) error {
			checks++
			if !valid {
				return apierrors.NewUnauthorized("token expired")
			}
			return nil
		}}
	rec := httptest.NewRecorder()
	if err := g.SignIn(rec, requestWith(nil), kube.Identity{User: "a", Act: kube.ActWithToken, Token: "t"}); err != nil {
		t.Fatal(err)
	}
	cookie := cookieFrom(t, rec)
	identify := func() error {
		_, err := g.Identify(httptest.NewRecorder(), requestWith(cookie))
		return err
	}
	if err := identify(); err != nil || checks != 0 {
		t.Fatalf("fresh sign-in: %v, %d checks", err, checks)
	}
	clock = clock.Add(6 * time.Minute)
	if err := identify(); err != nil || checks != 1 {
		t.Fatalf("after 6 min: %v, %d checks", err, checks)
	}
	if err := identify(); err != nil || checks != 1 {
		t.Fatalf("checked again within 5 min: %v, %d checks", err, checks)
	}
	valid = false
	clock = clock.Add(6 * time.Minute)
	if err := identify(); !errors.Is(err, ErrTokenRejected) {
		t.Fatalf("rejected token: %v", err)
	}
	if err := identify(); !errors.Is(err, ErrExpired) || checks != 2 {
		t.Fatalf("after rejection the session must be gone without another review: %v, %d checks", err, checks)
	}
}
