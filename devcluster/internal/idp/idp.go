// Package idp sets up devcluster's OpenID provider (the devcluster-oidc
// command in devcluster/oidc): who can sign in, which clients exist, the
// provider's configuration file, the file tests and the console read to use
// it, and the kube-apiserver authentication configuration that trusts it.
package idp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Prefix is put before the username and every group kube-apiserver takes from
// an ID token, so OIDC identities never collide with token users or system:
// names: alice signs in as "oidc:alice" in group "oidc:clusterdesk-admins".
const Prefix = "oidc:"

// Groups of the OpenID users, bound in access.ClusterRoleBindings like their
// token-user counterparts (with Prefix).
const (
	GroupAdmins    = "clusterdesk-admins"    // cluster-admin, like the token user admin
	GroupApprovers = "clusterdesk-approvers" // clusterdesk:approver, like approver
	GroupAuditors  = "clusterdesk-auditors"  // clusterdesk:auditor, like auditor
)

// Groups of the role users: the devcluster binds them to nothing. A test
// binds the roles of the console's Helm chart (charts/clusterdesk, roles.*)
// to them, so what such a user may do is exactly what the role grants
// (handlers/roles_oidc_integration_test.go).
const (
	GroupRoleViewer         = "clusterdesk-role-viewer"
	GroupRoleAuditor        = "clusterdesk-role-auditor"
	GroupRoleCSRApprover    = "clusterdesk-role-csr-approver"
	GroupRoleAPFAdmin       = "clusterdesk-role-apf-admin"
	GroupRoleAdmissionAdmin = "clusterdesk-role-admission-admin"
)

// User is someone who signs in on the provider's login page.
type User struct {
	Username string
	Groups   []string
}

// Users are the OpenID identities; dave is in no group, so the API server
// authenticates him and RBAC refuses him everything; erin to ivan are each in
// one role group that nothing binds until a test does.
var Users = []User{
	{Username: "alice", Groups: []string{GroupAdmins}},
	{Username: "bob", Groups: []string{GroupApprovers}},
	{Username: "carol", Groups: []string{GroupAuditors}},
	{Username: "dave"},
	{Username: "erin", Groups: []string{GroupRoleViewer}},
	{Username: "frank", Groups: []string{GroupRoleAuditor}},
	{Username: "grace", Groups: []string{GroupRoleCSRApprover}},
	{Username: "heidi", Groups: []string{GroupRoleAPFAdmin}},
	{Username: "ivan", Groups: []string{GroupRoleAdmissionAdmin}},
}

// Client is an OAuth client registered at the provider.
type Client struct {
	ID string
	// Trusted clients' ID tokens are accepted by kube-apiserver (their id is
	// one of its audiences).
	Trusted         bool
	IDTokenLifetime time.Duration
}

// Client ids.
const (
	ClientConsole     = "clusterdesk"  // the console's --auth oidc
	ClientOAuth2Proxy = "oauth2-proxy" // oauth2-proxy in front of the console
	// ClientShortLived's ID tokens expire ShortLifetime after issue: for
	// tests of refresh before expiry and of expired tokens.
	ClientShortLived = "clusterdesk-short-lived"
	// ClientUntrusted is a working client whose ID tokens kube-apiserver must
	// refuse (wrong audience).
	ClientUntrusted = "not-a-kube-audience"
)

// ShortLifetime is the ID-token lifetime of ClientShortLived.
const ShortLifetime = 10 * time.Second

// Clients are registered with every devcluster provider.
func Clients(lifetime time.Duration) []Client {
	return []Client{
		{ID: ClientConsole, Trusted: true, IDTokenLifetime: lifetime},
		{ID: ClientOAuth2Proxy, Trusted: true, IDTokenLifetime: lifetime},
		{ID: ClientShortLived, Trusted: true, IDTokenLifetime: ShortLifetime},
		{ID: ClientUntrusted, IDTokenLifetime: lifetime},
	}
}

// RedirectURIGlobs are the redirect (and post-logout redirect) URIs every
// client may use: any port and path on loopback, http or https, because the
// console and oauth2-proxy listen on ports chosen at test time. Patterns are
// doublestar globs as zitadel's op matches them (op.HasRedirectGlobs).
var RedirectURIGlobs = []string{
	"http://127.0.0.1:*/**", "https://127.0.0.1:*/**",
	"http://localhost:*/**", "https://localhost:*/**",
}

// Secrets are the generated passwords and client secrets, kept across runs
// like the token file so that what tests and the console were given stays valid.
type Secrets struct {
	Passwords     map[string]string `json:"passwords"`     // by username
	ClientSecrets map[string]string `json:"clientSecrets"` // by client id
}

// EnsureSecrets reads the secrets at path, adding any that a user or client
// lacks (new ones after an upgrade of devcluster), and writes them back.
func EnsureSecrets(path string, clients []Client) (Secrets, error) {
	var s Secrets
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &s); err != nil {
			return s, fmt.Errorf("%s: %w", path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return s, err
	}
	if s.Passwords == nil {
		s.Passwords = map[string]string{}
	}
	if s.ClientSecrets == nil {
		s.ClientSecrets = map[string]string{}
	}
	changed := false
	fill := func(m map[string]string, key string) error {
		if m[key] != "" {
			return nil
		}
		v, err := randomSecret()
		m[key], changed = v, true
		return err
	}
	for _, u := range Users {
		if err := fill(s.Passwords, u.Username); err != nil {
			return s, err
		}
	}
	for _, c := range clients {
		if err := fill(s.ClientSecrets, c.ID); err != nil {
			return s, err
		}
	}
	if !changed {
		return s, nil
	}
	return s, writeJSON(path, s, 0o600)
}

func randomSecret() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func writeJSON(path string, v any, mode os.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
