package testcluster

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// OIDCProvider is the devcluster's OpenID provider as DIR/oidc/oidc.json
// describes it (devcluster/internal/idp.Details; that module cannot be
// imported from here).
type OIDCProvider struct {
	Issuer   string                `json:"issuer"`
	CAFile   string                `json:"caFile"`
	LoginURL string                `json:"loginURL"`
	Scopes   []string              `json:"scopes"`
	Clients  map[string]OIDCClient `json:"clients"`
	Users    map[string]OIDCUser   `json:"users"`
}

// OIDCClient is one client of the provider.
type OIDCClient struct {
	ID                 string `json:"id"`
	Secret             string `json:"secret"`
	KubernetesAudience bool   `json:"kubernetesAudience"`
	IDTokenLifetime    string `json:"idTokenLifetime"`
}

// OIDCUser is one user: the password for the provider's form and who the
// API server sees.
type OIDCUser struct {
	Password         string   `json:"password"`
	Groups           []string `json:"groups"`
	KubernetesUser   string   `json:"kubernetesUser"`
	KubernetesGroups []string `json:"kubernetesGroups"`
}

// The devcluster provider's clients (devcluster README, "OpenID provider").
const (
	OIDCClientConsole    = "clusterdesk"
	OIDCClientShortLived = "clusterdesk-short-lived" // 10 s ID tokens
	OIDCClientNotKube    = "not-a-kube-audience"     // the API server refuses its tokens
)

// OIDC returns the devcluster's OpenID provider or fails the test (a
// devcluster on Kubernetes 1.28, or started before it had a provider, has none).
func OIDC(t testing.TB) OIDCProvider {
	t.Helper()
	Require(t)
	raw, err := os.ReadFile(filepath.Join(os.Getenv(EnvDir), "ready.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ready struct {
		OIDC string `json:"oidc"`
	}
	if err := json.Unmarshal(raw, &ready); err != nil {
		t.Fatal(err)
	}
	if ready.OIDC == "" {
		t.Fatalf("the devcluster in $%s runs no OpenID provider (ready.json names none)", EnvDir)
	}
	raw, err = os.ReadFile(ready.OIDC)
	if err != nil {
		t.Fatal(err)
	}
	var p OIDCProvider
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("%s: %v", ready.OIDC, err)
	}
	return p
}

// HTTPClient is a client that trusts the provider's CA.
func (p OIDCProvider) HTTPClient(t testing.TB) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(p.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatalf("no CA certificate in %s", p.CAFile)
	}
	return &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
}
