//go:build integration

package idp_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/devcluster/internal/idp"
	"github.com/clusterdesk/clusterdesk/devcluster/internal/ready"
)

// cluster is the running devcluster (DEVCLUSTER_DIR) and its OpenID provider.
type cluster struct {
	ready ready.Info
	oidc  idp.Details
	caPEM []byte
	https *http.Client // trusts devcluster's CA
	dir   string
}

func devcluster(t *testing.T) *cluster {
	t.Helper()
	dir := os.Getenv("DEVCLUSTER_DIR")
	if dir == "" {
		t.Fatal("DEVCLUSTER_DIR is not set: run under scripts/with-devcluster.sh (integration tests need a real cluster)")
	}
	c := &cluster{dir: dir}
	readJSON(t, filepath.Join(dir, "ready.json"), &c.ready)
	if c.ready.OIDC == "" {
		t.Fatalf("ready.json names no OpenID provider (Kubernetes %s)", c.ready.Version)
	}
	readJSON(t, c.ready.OIDC, &c.oidc)
	var err error
	if c.caPEM, err = os.ReadFile(c.oidc.CAFile); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(c.caPEM) {
		t.Fatal("no CA certificate in", c.oidc.CAFile)
	}
	c.https = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	return c
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// redirectURI is never listened on: the browser below stops at the redirect
// that leaves the provider, as a real browser would hand it to the client app.
const redirectURI = "http://127.0.0.1:18080/auth/oidc/callback"

func (c *cluster) oauth2Config(clientID string) *oauth2.Config {
	cl := c.oidc.Clients[clientID]
	disc := c.oidc.Issuer
	return &oauth2.Config{
		ClientID: cl.ID, ClientSecret: cl.Secret, RedirectURL: redirectURI,
		Scopes:   c.oidc.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: disc + "/authorize", TokenURL: disc + "/oauth/token"},
	}
}

// signIn runs the authorization code flow with PKCE as a browser would: it
// opens the authorize URL, posts the provider's login form with the user's
// password, and exchanges the code from the redirect for tokens.
func (c *cluster) signIn(t *testing.T, clientID, username string) *oauth2.Token {
	t.Helper()
	conf := c.oauth2Config(clientID)
	verifier := oauth2.GenerateVerifier()
	state, nonce := randomString(t), randomString(t)
	browser := c.browser(t)

	page, err := browser.Get(conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("nonce", nonce)))
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != http.StatusOK || page.Request.URL.String() != c.oidc.LoginURL+"?"+page.Request.URL.RawQuery {
		t.Fatalf("authorize ended at %s (%s), want the login page %s", page.Request.URL, page.Status, c.oidc.LoginURL)
	}
	form := url.Values{
		"authRequestID": {page.Request.URL.Query().Get("authRequestID")},
		"username":      {username},
		"password":      {c.oidc.Users[username].Password},
	}
	resp, err := browser.PostForm(c.oidc.LoginURL, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		t.Fatalf("login as %s: %s, no redirect to the client", username, resp.Status)
	}
	if !strings.HasPrefix(loc.String(), redirectURI+"?") || loc.Query().Get("state") != state {
		t.Fatalf("login redirected to %s, want %s with state %s", loc, redirectURI, state)
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, c.https)
	tok, err := conf.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("code exchange: %v", err)
	}
	if claims := idTokenClaims(t, tok); claims["nonce"] != nonce {
		t.Fatalf("ID token nonce %v, want %s", claims["nonce"], nonce)
	}
	return tok
}

// browser keeps cookies and follows redirects while they stay on the provider.
func (c *cluster) browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	issuer, err := url.Parse(c.oidc.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	b := *c.https
	b.Jar = jar
	b.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host != issuer.Host {
			return http.ErrUseLastResponse
		}
		return nil
	}
	return &b
}

func idToken(t *testing.T, tok *oauth2.Token) string {
	t.Helper()
	raw, ok := tok.Extra("id_token").(string)
	if !ok || raw == "" {
		t.Fatal("token response has no id_token")
	}
	return raw
}

// idTokenClaims reads the payload without verifying it: kube-apiserver is
// the verifier under test here.
func idTokenClaims(t *testing.T, tok *oauth2.Token) map[string]any {
	t.Helper()
	parts := strings.Split(idToken(t, tok), ".")
	if len(parts) != 3 {
		t.Fatalf("ID token has %d parts", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// kube is a client of the devcluster's API server that presents bearer.
func (c *cluster) kube(t *testing.T, bearer string) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{
		Host: c.ready.Server, BearerToken: bearer,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.caPEM},
	})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func whoAmI(cs kubernetes.Interface) (authenticationv1.UserInfo, error) {
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}

func randomString(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func TestOIDCUsersAreWhoTheAPIServerSees(t *testing.T) {
	c := devcluster(t)
	for _, username := range []string{"alice", "bob", "carol", "dave"} {
		t.Run(username, func(t *testing.T) {
			tok := c.signIn(t, idp.ClientConsole, username)
			got, err := whoAmI(c.kube(t, idToken(t, tok)))
			if err != nil {
				t.Fatalf("SelfSubjectReview with %s's ID token: %v", username, err)
			}
			want := c.oidc.Users[username]
			if got.Username != "oidc:"+username || got.Username != want.KubernetesUser {
				t.Errorf("username %q, want oidc:%s", got.Username, username)
			}
			if !slices.Equal(got.Groups, want.KubernetesGroups) {
				t.Errorf("groups %v, want %v", got.Groups, want.KubernetesGroups)
			}
		})
	}
}

// TestOIDCWritesAreAuthorisedByGroupAndAudited: alice's group is bound to
// cluster-admin, so her write goes through and the audit log names her;
// carol (auditors) may read CSRs but not write; dave (no group) may do nothing.
func TestOIDCWritesAreAuthorisedByGroupAndAudited(t *testing.T) {
	c := devcluster(t)
	ctx := context.Background()
	name := "oidc-dev-" + randomString(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"by": "alice"}}

	alice := c.kube(t, idToken(t, c.signIn(t, idp.ClientConsole, "alice")))
	if _, err := alice.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("alice (cluster-admin by group) cannot create a ConfigMap: %v", err)
	}
	t.Cleanup(func() {
		_ = alice.CoreV1().ConfigMaps("default").Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	c.waitForAuditEvent(t, "create", name, "oidc:alice", "oidc:clusterdesk-admins")

	carol := c.kube(t, idToken(t, c.signIn(t, idp.ClientConsole, "carol")))
	if _, err := carol.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		t.Errorf("carol (auditors) cannot list CSRs: %v", err)
	}
	cm2 := cm.DeepCopy()
	cm2.Name = name + "-carol"
	if _, err := carol.CoreV1().ConfigMaps("default").Create(ctx, cm2, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("carol creating a ConfigMap: %v, want Forbidden", err)
	}

	bob := c.kube(t, idToken(t, c.signIn(t, idp.ClientOAuth2Proxy, "bob")))
	if _, err := bob.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		t.Errorf("bob (approvers), signed in through the oauth2-proxy client, cannot list CSRs: %v", err)
	}

	dave := c.kube(t, idToken(t, c.signIn(t, idp.ClientConsole, "dave")))
	if _, err := dave.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{Limit: 1}); !apierrors.IsForbidden(err) {
		t.Errorf("dave (no group) listing CSRs: %v, want Forbidden", err)
	}
}

// waitForAuditEvent waits for the API server's audit log to record verb on
// the ConfigMap name by user in group. The log is written as the request
// completes, so this waits for a write, not for a speed.
func (c *cluster) waitForAuditEvent(t *testing.T, verb, name, user, group string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c.auditHas(t, verb, name, user, group) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit log %s has no %s of ConfigMap %s by %s in %s", filepath.Join(c.dir, "audit.log"), verb, name, user, group)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (c *cluster) auditHas(t *testing.T, verb, name, user, group string) bool {
	f, err := os.Open(filepath.Join(c.dir, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A Reader, not a Scanner: a RequestResponse event has no length limit,
	// and a Scanner stops at the first line over its buffer, hiding every
	// event after it.
	lines := bufio.NewReader(f)
	for {
		line, err := lines.ReadBytes('\n')
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if len(line) == 0 && err == io.EOF {
			return false
		}
		if !bytes.Contains(line, []byte(name)) {
			continue
		}
		var ev struct {
			Verb  string `json:"verb"`
			Stage string `json:"stage"`
			User  struct {
				Username string
				Groups   []string
			} `json:"user"`
			ObjectRef      struct{ Resource, Name string } `json:"objectRef"`
			ResponseStatus struct{ Code int }              `json:"responseStatus"`
		}
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		if ev.Verb == verb && ev.ObjectRef.Resource == "configmaps" && ev.ObjectRef.Name == name &&
			ev.User.Username == user && slices.Contains(ev.User.Groups, group) && ev.ResponseStatus.Code < 300 {
			return true
		}
	}
}

func TestAPIServerRefusesAnotherAudience(t *testing.T) {
	c := devcluster(t)
	if c.oidc.Clients[idp.ClientUntrusted].KubernetesAudience {
		t.Fatalf("%s is listed as a kube-apiserver audience", idp.ClientUntrusted)
	}
	tok := c.signIn(t, idp.ClientUntrusted, "alice")
	if aud := idTokenClaims(t, tok)["aud"]; !strings.Contains(strings.Join(toStrings(aud), " "), idp.ClientUntrusted) {
		t.Fatalf("aud %v, want %s", aud, idp.ClientUntrusted)
	}
	if _, err := whoAmI(c.kube(t, idToken(t, tok))); !apierrors.IsUnauthorized(err) {
		t.Errorf("ID token for audience %s: %v, want Unauthorized", idp.ClientUntrusted, err)
	}
}

func toStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, s := range v {
			out = append(out, s.(string))
		}
		return out
	}
	return nil
}

// apiServerTokenCacheTTL is how long kube-apiserver caches a successful token
// authentication: TokenSuccessCacheTTL in upstream
// pkg/kubeapiserver/options/authentication.go (10 s, no flag), applied by
// k8s.io/apiserver/pkg/authentication/token/cache/cached_token_authenticator.go
// without looking at the token's expiry.
const apiServerTokenCacheTTL = 10 * time.Second

// TestAPIServerRefusesAnExpiredTokenAndAcceptsTheRefreshedOne uses the client
// whose ID tokens live idp.ShortLifetime: accepted at first, refused once exp
// has passed, and a token from the refresh token is accepted again.
func TestAPIServerRefusesAnExpiredTokenAndAcceptsTheRefreshedOne(t *testing.T) {
	c := devcluster(t)
	tok := c.signIn(t, idp.ClientShortLived, "alice")
	if _, err := whoAmI(c.kube(t, idToken(t, tok))); err != nil {
		t.Fatalf("fresh short-lived token refused: %v (if its lifetime ran out meanwhile, the machine is very slow)", err)
	}
	// The API server keeps a successful token authentication for
	// apiServerTokenCacheTTL whatever the token's exp says, so the token is
	// refused only once both have passed.
	cachedUntil := time.Now().Add(apiServerTokenCacheTTL)
	exp, ok := idTokenClaims(t, tok)["exp"].(float64)
	if !ok {
		t.Fatal("ID token has no exp")
	}
	refusedFrom := time.Unix(int64(exp), 0)
	if cachedUntil.After(refusedFrom) {
		refusedFrom = cachedUntil
	}
	time.Sleep(time.Until(refusedFrom.Add(time.Second)))
	if _, err := whoAmI(c.kube(t, idToken(t, tok))); !apierrors.IsUnauthorized(err) {
		t.Errorf("expired ID token: %v, want Unauthorized", err)
	}

	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, c.https)
	refreshed, err := c.oauth2Config(idp.ClientShortLived).TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	got, err := whoAmI(c.kube(t, idToken(t, refreshed)))
	if err != nil || got.Username != "oidc:alice" {
		t.Errorf("refreshed ID token: %v as %q, want oidc:alice", err, got.Username)
	}
}

func TestWrongPasswordIsRefusedOnTheLoginPage(t *testing.T) {
	c := devcluster(t)
	conf := c.oauth2Config(idp.ClientConsole)
	browser := c.browser(t)
	page, err := browser.Get(conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	form := url.Values{"authRequestID": {page.Request.URL.Query().Get("authRequestID")}, "username": {"alice"}, "password": {"not-" + c.oidc.Users["alice"].Password}}
	resp, err := browser.PostForm(c.oidc.LoginURL, form)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "wrong username or password") {
		t.Errorf("wrong password: %s %q, want 401 and the form with an error", resp.Status, body)
	}
}
