package idp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	api "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/apis/apiserver/install"
	apiv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"k8s.io/apiserver/pkg/apis/apiserver/validation"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/devcluster/internal/pki"
)

// TestAuthenticationConfigIsValidUpstream decodes the file strictly with
// kube-apiserver's own v1 types and runs its own validation on it.
func TestAuthenticationConfigIsValidUpstream(t *testing.T) {
	keys, err := pki.Ensure(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testCA, err := os.ReadFile(keys.CACert)
	if err != nil {
		t.Fatal(err)
	}
	data, err := AuthenticationConfig("https://127.0.0.1:4443", testCA, Clients(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var v1cfg apiv1.AuthenticationConfiguration
	if err := yaml.UnmarshalStrict(data, &v1cfg); err != nil {
		t.Fatalf("not an upstream v1 AuthenticationConfiguration: %v\n%s", err, data)
	}
	scheme := runtime.NewScheme()
	install.Install(scheme)
	var internal api.AuthenticationConfiguration
	if err := scheme.Convert(&v1cfg, &internal, nil); err != nil {
		t.Fatal(err)
	}
	if errs := validation.ValidateAuthenticationConfiguration(authenticationcel.NewDefaultCompiler(), &internal, nil); len(errs) > 0 {
		t.Fatalf("kube-apiserver would refuse it: %v\n%s", errs.ToAggregate(), data)
	}
	if v1cfg.Kind != "AuthenticationConfiguration" || v1cfg.APIVersion != "apiserver.config.k8s.io/v1" {
		t.Errorf("kind %s/%s", v1cfg.APIVersion, v1cfg.Kind)
	}
	jwt := v1cfg.JWT[0]
	if want := []string{ClientConsole, ClientOAuth2Proxy, ClientShortLived}; !slices.Equal(jwt.Issuer.Audiences, want) {
		t.Errorf("audiences %v, want %v (not %s)", jwt.Issuer.Audiences, want, ClientUntrusted)
	}
	if jwt.Issuer.CertificateAuthority != string(testCA) {
		t.Errorf("certificateAuthority %q", jwt.Issuer.CertificateAuthority)
	}
	m := jwt.ClaimMappings
	if m.Username.Claim != "sub" || *m.Username.Prefix != "oidc:" || m.Groups.Claim != "groups" || *m.Groups.Prefix != "oidc:" {
		t.Errorf("claim mappings %+v", m)
	}
}

func TestEnsureSecretsIsStableAndFillsGaps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "oidc-secrets.json")
	clients := Clients(time.Hour)
	first, err := EnsureSecrets(path, clients[:1])
	if err != nil {
		t.Fatal(err)
	}
	second, err := EnsureSecrets(path, clients)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range Users {
		if p := second.Passwords[u.Username]; p == "" || p != first.Passwords[u.Username] {
			t.Errorf("%s: password %q then %q", u.Username, first.Passwords[u.Username], p)
		}
	}
	if second.ClientSecrets[ClientConsole] != first.ClientSecrets[ClientConsole] {
		t.Error("console secret changed on the second run")
	}
	for _, c := range clients {
		if second.ClientSecrets[c.ID] == "" {
			t.Errorf("client %s has no secret", c.ID)
		}
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("secrets file mode %o, want 600", info.Mode().Perm())
	}
}

func TestDetailsNameTheIdentitiesTheAPIServerSees(t *testing.T) {
	clients := Clients(time.Hour)
	s, err := EnsureSecrets(filepath.Join(t.TempDir(), "s.json"), clients)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDetails("https://127.0.0.1:4443", "/ca.crt", clients, s)
	alice := d.Users["alice"]
	if alice.KubernetesUser != "oidc:alice" || !slices.Equal(alice.KubernetesGroups, []string{"oidc:clusterdesk-admins", "system:authenticated"}) {
		t.Errorf("alice as the API server sees her: %+v", alice)
	}
	if alice.Password != s.Passwords["alice"] || d.Clients[ClientConsole].Secret != s.ClientSecrets[ClientConsole] {
		t.Error("details do not carry the generated secrets")
	}
	if d.Clients[ClientUntrusted].KubernetesAudience || !d.Clients[ClientConsole].KubernetesAudience {
		t.Errorf("kubernetesAudience: console %v, untrusted %v", d.Clients[ClientConsole].KubernetesAudience, d.Clients[ClientUntrusted].KubernetesAudience)
	}
	if d.Clients[ClientShortLived].IDTokenLifetime != ShortLifetime.String() {
		t.Errorf("short-lived lifetime %s", d.Clients[ClientShortLived].IDTokenLifetime)
	}

	cfg := NewProviderConfig("127.0.0.1:4443", ProviderFiles{Cert: "c", Key: "k", SigningKey: "s"}, clients, s)
	if cfg.Issuer != d.Issuer {
		t.Errorf("provider issuer %s, details issuer %s", cfg.Issuer, d.Issuer)
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The field names are the provider's (devcluster/oidc/config.go), which
	// refuses unknown fields; this pins the ones it requires.
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"issuer", "listen", "tlsCertFile", "tlsKeyFile", "signingKeyFile", "users", "clients"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("provider config lacks %q", f)
		}
	}
}
