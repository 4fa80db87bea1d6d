package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zitadel/oidc/v3/pkg/client/rp"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"golang.org/x/oauth2"
)

// testProvider runs the real handler on a TLS loopback listener whose URL is the issuer.
type testProvider struct {
	cfg    *Config
	server *httptest.Server
}

const testRedirect = "http://127.0.0.1:41234/auth/callback"

func startProvider(t *testing.T) *testProvider {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "signing.key")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{
		Issuer:         "https://" + l.Addr().String(),
		Listen:         l.Addr().String(),
		TLSCertFile:    "unused-by-httptest",
		TLSKeyFile:     "unused-by-httptest",
		SigningKeyFile: keyFile,
		Users: []User{
			{Username: "alice", Password: "alice-pw", Email: "alice@devcluster.test", Groups: []string{"clusterdesk-admins"}},
			{Username: "dave", Password: "dave-pw"},
		},
		Clients: []Client{{
			ID: "console", Secret: "console-secret", IDTokenLifetime: "1h",
			RedirectURIGlobs: []string{"http://127.0.0.1:*/**"},
		}},
	}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &testProvider{cfg: cfg, server: srv}
}

func (p *testProvider) oauth2Config(redirect string) *oauth2.Config {
	return &oauth2.Config{
		ClientID:     "console",
		ClientSecret: "console-secret",
		RedirectURL:  redirect,
		Scopes:       []string{oidc.ScopeOpenID, oidc.ScopeOfflineAccess, ScopeGroups, oidc.ScopeEmail},
		Endpoint: oauth2.Endpoint{
			AuthURL:  p.cfg.Issuer + "/authorize",
			TokenURL: p.cfg.Issuer + "/oauth/token",
		},
	}
}

// browser is an HTTP client with cookies that follows redirects until one
// leaves the provider, as a browser would hand that one to the client app.
func (p *testProvider) browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := p.server.Client()
	c.Jar = jar
	c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host != p.server.Listener.Addr().String() {
			return http.ErrUseLastResponse
		}
		return nil
	}
	return c
}

// authorize starts a sign-in and returns the login page response.
func authorize(t *testing.T, browser *http.Client, authURL string) *http.Response {
	t.Helper()
	resp, err := browser.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// submitLogin posts the login form of the page the sign-in landed on.
func submitLogin(t *testing.T, browser *http.Client, page *http.Response, form url.Values) *http.Response {
	t.Helper()
	page.Body.Close()
	if page.StatusCode != http.StatusOK || page.Request.URL.Path != loginPath {
		t.Fatalf("authorize ended at %s with %s, want the login page", page.Request.URL, page.Status)
	}
	form.Set(authRequestParam, page.Request.URL.Query().Get(authRequestParam))
	resp, err := browser.PostForm(page.Request.URL.Scheme+"://"+page.Request.URL.Host+loginPath, form)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// callbackQuery is the query of the redirect that leaves the provider.
func callbackQuery(t *testing.T, resp *http.Response, redirect string) url.Values {
	t.Helper()
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		t.Fatalf("%s: no redirect: %v", resp.Status, err)
	}
	if !strings.HasPrefix(loc.String(), redirect+"?") {
		t.Fatalf("redirected to %s, want %s?…", loc, redirect)
	}
	return loc.Query()
}

func TestCodeFlowWithPKCEIssuesVerifiableIDTokenWithGroups(t *testing.T) {
	p := startProvider(t)
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, p.server.Client())
	conf := p.oauth2Config(testRedirect)
	verifier := oauth2.GenerateVerifier()
	browser := p.browser(t)

	page := authorize(t, browser, conf.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("nonce", "nonce-1")))
	q := callbackQuery(t, submitLogin(t, browser, page, url.Values{"username": {"alice"}, "password": {"alice-pw"}}), testRedirect)
	if q.Get("state") != "state-1" || q.Get("code") == "" {
		t.Fatalf("callback query %v, want state-1 and a code", q)
	}

	if _, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption("not-the-verifier-"+verifier)); err == nil {
		t.Fatal("code exchanged with a wrong PKCE verifier")
	}
	// zitadel deletes the code only on success, so the right verifier still works.
	tok, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if _, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier)); err == nil {
		t.Fatal("a code was exchanged twice")
	}
	claims := verifyIDToken(t, p, tok, "nonce-1")
	if claims.Subject != "alice" || claims.Email != "alice@devcluster.test" {
		t.Errorf("sub %q email %q, want alice and alice@devcluster.test", claims.Subject, claims.Email)
	}
	if got := groupsClaim(t, claims); !slices.Equal(got, []string{"clusterdesk-admins"}) {
		t.Errorf("groups claim %v, want [clusterdesk-admins]", got)
	}
	if tok.RefreshToken == "" {
		t.Fatal("no refresh token for offline_access")
	}

	refreshed, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	again := verifyIDToken(t, p, refreshed, "")
	if again.Subject != "alice" || !slices.Equal(groupsClaim(t, again), []string{"clusterdesk-admins"}) {
		t.Errorf("refreshed ID token: sub %q groups %v", again.Subject, groupsClaim(t, again))
	}
	if refreshed.RefreshToken == "" || refreshed.RefreshToken == tok.RefreshToken {
		t.Errorf("refresh token not rotated")
	}
	if _, err := conf.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token(); err == nil {
		t.Error("a rotated-out refresh token still works")
	}
}

func verifyIDToken(t *testing.T, p *testProvider, tok *oauth2.Token, nonce string) *oidc.IDTokenClaims {
	t.Helper()
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		t.Fatal("token response has no id_token")
	}
	keys := rp.NewRemoteKeySet(p.server.Client(), p.cfg.Issuer+"/keys")
	// A refreshed ID token carries the nonce of the sign-in or none
	// (OIDC Core 12.2); it is only compared when the caller passes one.
	var opts []rp.VerifierOption
	if nonce != "" {
		opts = append(opts, rp.WithNonce(func(context.Context) string { return nonce }))
	}
	v := rp.NewIDTokenVerifier(p.cfg.Issuer, "console", keys, opts...)
	claims, err := rp.VerifyIDToken[*oidc.IDTokenClaims](context.Background(), raw, v)
	if err != nil {
		t.Fatalf("ID token does not verify: %v", err)
	}
	return claims
}

func groupsClaim(t *testing.T, c *oidc.IDTokenClaims) []string {
	t.Helper()
	data, err := json.Marshal(c.Claims["groups"])
	if err != nil {
		t.Fatal(err)
	}
	var groups []string
	if err := json.Unmarshal(data, &groups); err != nil {
		t.Fatalf("groups claim %s: %v", data, err)
	}
	return groups
}

func TestUserWithoutGroupsGetsEmptyGroupsClaim(t *testing.T) {
	p := startProvider(t)
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, p.server.Client())
	conf := p.oauth2Config(testRedirect)
	verifier := oauth2.GenerateVerifier()
	browser := p.browser(t)
	page := authorize(t, browser, conf.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)))
	q := callbackQuery(t, submitLogin(t, browser, page, url.Values{"username": {"dave"}, "password": {"dave-pw"}}), testRedirect)
	tok, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	claims := verifyIDToken(t, p, tok, "")
	if g, ok := claims.Claims["groups"]; !ok || len(groupsClaim(t, claims)) != 0 {
		t.Errorf("groups claim %v (present %v), want an empty list", g, ok)
	}
}

func TestWrongPasswordShowsTheFormAgain(t *testing.T) {
	p := startProvider(t)
	browser := p.browser(t)
	conf := p.oauth2Config(testRedirect)
	page := authorize(t, browser, conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	for _, form := range []url.Values{
		{"username": {"alice"}, "password": {"wrong"}},
		{"username": {"mallory"}, "password": {"alice-pw"}},
	} {
		resp := submitLogin(t, browser, page, form)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), errWrongPassword.Error()) {
			t.Errorf("%v: %s, body %q; want 401 with %q", form, resp.Status, body, errWrongPassword)
		}
		if _, err := resp.Location(); !errors.Is(err, http.ErrNoLocation) {
			t.Errorf("%v: redirected after a failed sign-in", form)
		}
	}
}

func TestDenyReturnsAccessDeniedToTheClient(t *testing.T) {
	p := startProvider(t)
	browser := p.browser(t)
	conf := p.oauth2Config(testRedirect)
	page := authorize(t, browser, conf.AuthCodeURL("state-d", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	q := callbackQuery(t, submitLogin(t, browser, page, url.Values{"deny": {"1"}}), testRedirect)
	if q.Get("error") != "access_denied" || q.Get("state") != "state-d" || q.Has("code") {
		t.Errorf("callback query %v, want error=access_denied, state-d and no code", q)
	}
}

func TestRedirectOutsideTheGlobsIsRefused(t *testing.T) {
	p := startProvider(t)
	browser := p.browser(t)
	for _, redirect := range []string{"http://evil.example:8080/auth/callback", "https://192.0.2.1/cb"} {
		resp := authorize(t, browser, p.oauth2Config(redirect).AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
		resp.Body.Close()
		if loc, err := resp.Location(); err == nil && strings.HasPrefix(loc.String(), redirect) {
			t.Errorf("%s: provider redirected to it (%s)", redirect, loc)
		}
		if resp.Request.URL.Path == loginPath {
			t.Errorf("%s: login page shown for an unregistered redirect", redirect)
		}
	}
	// Any port and path on 127.0.0.1 is registered.
	resp := authorize(t, browser, p.oauth2Config("http://127.0.0.1:9/oauth2/callback").AuthCodeURL("s"))
	resp.Body.Close()
	if resp.Request.URL.Path != loginPath {
		t.Errorf("loopback redirect on another port and path: ended at %s (%s), want the login page", resp.Request.URL, resp.Status)
	}
}

func TestConfigRejectsIncompleteFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	for name, body := range map[string]string{
		"http issuer":     `{"issuer":"http://127.0.0.1:1","listen":"x","tlsCertFile":"x","tlsKeyFile":"x","signingKeyFile":"x"}`,
		"unknown field":   `{"issuer":"https://127.0.0.1:1","listen":"x","tlsCertFile":"x","tlsKeyFile":"x","signingKeyFile":"x","extra":1}`,
		"bad lifetime":    `{"issuer":"https://127.0.0.1:1","listen":"x","tlsCertFile":"x","tlsKeyFile":"x","signingKeyFile":"x","clients":[{"id":"a","secret":"b","idTokenLifetime":"soon"}]}`,
		"user w/o passwd": `{"issuer":"https://127.0.0.1:1","listen":"x","tlsCertFile":"x","tlsKeyFile":"x","signingKeyFile":"x","users":[{"username":"a"}]}`,
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(path); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
