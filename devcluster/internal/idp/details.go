package idp

import (
	"strings"
)

// Details is DIR/oidc/oidc.json: what a test, the console or oauth2-proxy
// needs to use the provider. ready.json names the file ("oidc").
type Details struct {
	Issuer string `json:"issuer"`
	// CAFile is devcluster's CA (PEM), which signed the provider's certificate.
	CAFile string `json:"caFile"`
	// LoginURL is the provider's sign-in form: fields "username" and
	// "password", hidden "authRequestID", buttons "signin" and "deny".
	LoginURL string `json:"loginURL"`
	// Scopes a client should ask for: offline_access for a refresh token.
	Scopes []string `json:"scopes"`
	// RedirectURIGlobs every client may redirect to (doublestar patterns).
	RedirectURIGlobs []string `json:"redirectURIGlobs"`
	// UsernamePrefix and GroupsPrefix are what kube-apiserver puts before the
	// sub and groups claims.
	UsernamePrefix string                   `json:"usernamePrefix"`
	GroupsClaim    string                   `json:"groupsClaim"`
	GroupsPrefix   string                   `json:"groupsPrefix"`
	Clients        map[string]ClientDetails `json:"clients"` // by client id
	Users          map[string]UserDetails   `json:"users"`   // by username
}

// ClientDetails is one client as the relying party sees it.
type ClientDetails struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
	// KubernetesAudience tells whether kube-apiserver accepts its ID tokens.
	KubernetesAudience bool   `json:"kubernetesAudience"`
	IDTokenLifetime    string `json:"idTokenLifetime"`
}

// UserDetails is one user: the password for the form, and the identity the
// API server sees after sign-in (SelfSubjectReview, audit log).
type UserDetails struct {
	Password         string   `json:"password"`
	Groups           []string `json:"groups"`
	KubernetesUser   string   `json:"kubernetesUser"`
	KubernetesGroups []string `json:"kubernetesGroups"`
}

// NewDetails describes the provider at issuer.
func NewDetails(issuer, caFile string, clients []Client, s Secrets) Details {
	d := Details{
		Issuer:           issuer,
		CAFile:           caFile,
		LoginURL:         strings.TrimSuffix(issuer, "/") + "/login",
		Scopes:           []string{"openid", "profile", "email", "groups", "offline_access"},
		RedirectURIGlobs: RedirectURIGlobs,
		UsernamePrefix:   Prefix,
		GroupsClaim:      "groups",
		GroupsPrefix:     Prefix,
		Clients:          map[string]ClientDetails{},
		Users:            map[string]UserDetails{},
	}
	for _, c := range clients {
		d.Clients[c.ID] = ClientDetails{ID: c.ID, Secret: s.ClientSecrets[c.ID], KubernetesAudience: c.Trusted, IDTokenLifetime: c.IDTokenLifetime.String()}
	}
	for _, u := range Users {
		groups := append([]string{}, u.Groups...)
		kubeGroups := make([]string, 0, len(groups)+1)
		for _, g := range groups {
			kubeGroups = append(kubeGroups, Prefix+g)
		}
		kubeGroups = append(kubeGroups, "system:authenticated")
		d.Users[u.Username] = UserDetails{Password: s.Passwords[u.Username], Groups: groups, KubernetesUser: Prefix + u.Username, KubernetesGroups: kubeGroups}
	}
	return d
}

// Write stores the details at path, readable by the owner only: it holds passwords.
func (d Details) Write(path string) error { return writeJSON(path, d, 0o600) }

// ProviderConfig is the devcluster-oidc configuration file. Its fields mirror
// Config in devcluster/oidc/config.go, which cannot be imported: that module
// is kept apart so its dependencies stay out of this one.
type ProviderConfig struct {
	Issuer         string           `json:"issuer"`
	Listen         string           `json:"listen"`
	TLSCertFile    string           `json:"tlsCertFile"`
	TLSKeyFile     string           `json:"tlsKeyFile"`
	SigningKeyFile string           `json:"signingKeyFile"`
	Users          []ProviderUser   `json:"users"`
	Clients        []ProviderClient `json:"clients"`
}

// ProviderUser mirrors devcluster/oidc User.
type ProviderUser struct {
	Username string   `json:"username"`
	Password string   `json:"password"`
	Email    string   `json:"email,omitempty"`
	Groups   []string `json:"groups,omitempty"`
}

// ProviderClient mirrors devcluster/oidc Client.
type ProviderClient struct {
	ID                         string   `json:"id"`
	Secret                     string   `json:"secret"`
	RedirectURIGlobs           []string `json:"redirectURIGlobs"`
	PostLogoutRedirectURIGlobs []string `json:"postLogoutRedirectURIGlobs,omitempty"`
	IDTokenLifetime            string   `json:"idTokenLifetime"`
}

// ProviderFiles are the TLS and signing key files of the provider.
type ProviderFiles struct {
	Cert, Key, SigningKey string
}

// NewProviderConfig is the provider's configuration for listen (host:port).
func NewProviderConfig(listen string, files ProviderFiles, clients []Client, s Secrets) ProviderConfig {
	cfg := ProviderConfig{
		Issuer:         "https://" + listen,
		Listen:         listen,
		TLSCertFile:    files.Cert,
		TLSKeyFile:     files.Key,
		SigningKeyFile: files.SigningKey,
	}
	for _, u := range Users {
		cfg.Users = append(cfg.Users, ProviderUser{Username: u.Username, Password: s.Passwords[u.Username], Email: u.Username + "@devcluster.test", Groups: u.Groups})
	}
	for _, c := range clients {
		cfg.Clients = append(cfg.Clients, ProviderClient{
			ID: c.ID, Secret: s.ClientSecrets[c.ID],
			RedirectURIGlobs: RedirectURIGlobs, PostLogoutRedirectURIGlobs: RedirectURIGlobs,
			IDTokenLifetime: c.IDTokenLifetime.String(),
		})
	}
	return cfg
}

// Write stores the configuration at path, readable by the owner only.
func (c ProviderConfig) Write(path string) error { return writeJSON(path, c, 0o600) }
