package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Config is the provider's whole configuration: devcluster writes it (see
// devcluster/internal/idp) and starts the provider with --config pointing at it.
// The provider keeps everything else (auth requests, codes, tokens) in memory.
type Config struct {
	// Issuer is the https URL that the tokens' iss claim and discovery carry.
	Issuer string `json:"issuer"`
	// Listen is the loopback address to serve on, the host and port of Issuer.
	Listen         string   `json:"listen"`
	TLSCertFile    string   `json:"tlsCertFile"`
	TLSKeyFile     string   `json:"tlsKeyFile"`
	SigningKeyFile string   `json:"signingKeyFile"` // RSA private key, PKCS#8 PEM
	Users          []User   `json:"users"`
	Clients        []Client `json:"clients"`
}

// User is a person who can sign in with a password.
type User struct {
	Username string   `json:"username"`
	Password string   `json:"password"`
	Email    string   `json:"email,omitempty"`
	Groups   []string `json:"groups,omitempty"`
}

// Client is a confidential OAuth client (client_secret_basic or _post).
type Client struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
	// RedirectURIGlobs are doublestar patterns, e.g. "http://127.0.0.1:*/**".
	RedirectURIGlobs           []string `json:"redirectURIGlobs"`
	PostLogoutRedirectURIGlobs []string `json:"postLogoutRedirectURIGlobs,omitempty"`
	// IDTokenLifetime is a Go duration ("1h", "5s"); access tokens live as long.
	IDTokenLifetime string `json:"idTokenLifetime"`
}

// LoadConfig reads and checks the configuration at path.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

func (c *Config) validate() error {
	var errs []error
	if !strings.HasPrefix(c.Issuer, "https://") {
		errs = append(errs, fmt.Errorf("issuer %q: must be an https URL", c.Issuer))
	}
	for name, v := range map[string]string{"listen": c.Listen, "tlsCertFile": c.TLSCertFile, "tlsKeyFile": c.TLSKeyFile, "signingKeyFile": c.SigningKeyFile} {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is required", name))
		}
	}
	users := map[string]bool{}
	for _, u := range c.Users {
		if u.Username == "" || u.Password == "" || users[u.Username] {
			errs = append(errs, fmt.Errorf("user %q: needs a unique username and a password", u.Username))
		}
		users[u.Username] = true
	}
	clients := map[string]bool{}
	for _, cl := range c.Clients {
		if cl.ID == "" || cl.Secret == "" || clients[cl.ID] {
			errs = append(errs, fmt.Errorf("client %q: needs a unique id and a secret", cl.ID))
		}
		clients[cl.ID] = true
		if _, err := cl.idTokenLifetime(); err != nil {
			errs = append(errs, fmt.Errorf("client %q: %w", cl.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (c Client) idTokenLifetime() (time.Duration, error) {
	d, err := time.ParseDuration(c.IDTokenLifetime)
	if err != nil {
		return 0, fmt.Errorf("idTokenLifetime: %w", err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("idTokenLifetime %s: must be positive", d)
	}
	return d, nil
}
