package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// oidcConfig is --auth oidc's settings: the issuer and the console's client there.
type oidcConfig struct {
	issuer           string
	clientID         string
	clientSecretFile string
	caFile           string
	redirectURL      string
	scopes           string
	groupsClaim      string
}

func (o *oidcConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&o.issuer, "oidc-issuer-url", env("OIDC_ISSUER_URL", ""), "oidc mode: the OpenID provider's issuer URL (https; its discovery document is at ISSUER/.well-known/openid-configuration)")
	fs.StringVar(&o.clientID, "oidc-client-id", env("OIDC_CLIENT_ID", ""), "oidc mode: the console's client id at the provider; the API server must accept it as an audience")
	fs.StringVar(&o.clientSecretFile, "oidc-client-secret-file", env("OIDC_CLIENT_SECRET_FILE", ""), "oidc mode: a file holding the client secret (or set CLUSTERDESK_OIDC_CLIENT_SECRET)")
	fs.StringVar(&o.caFile, "oidc-ca-file", env("OIDC_CA_FILE", ""), "oidc mode: PEM CA bundle trusted for the issuer, besides the system's")
	fs.StringVar(&o.redirectURL, "oidc-redirect-url", env("OIDC_REDIRECT_URL", ""), "oidc mode: the callback URL registered at the provider, the console's public base URL + "+urls.OIDCCallback+" (default: --public-url's, else the address served on)")
	fs.StringVar(&o.scopes, "oidc-scopes", env("OIDC_SCOPES", strings.Join(auth.DefaultOIDCScopes, ",")), "oidc mode: scopes to ask for, comma-separated (offline_access gets the refresh token)")
	fs.StringVar(&o.groupsClaim, "oidc-groups-claim", env("OIDC_GROUPS_CLAIM", "groups"), "oidc mode: the ID token claim listing the person's groups")
}

// precheck refuses oidc mode without its required settings before anything starts.
func (o oidcConfig) precheck() error {
	var missing []string
	if o.issuer == "" {
		missing = append(missing, "--oidc-issuer-url")
	}
	if o.clientID == "" {
		missing = append(missing, "--oidc-client-id")
	}
	if o.clientSecretFile == "" && os.Getenv("CLUSTERDESK_OIDC_CLIENT_SECRET") == "" {
		missing = append(missing, "--oidc-client-secret-file (or CLUSTERDESK_OIDC_CLIENT_SECRET)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("--auth oidc needs %s", strings.Join(missing, ", "))
	}
	return nil
}

// relyingParty builds the OIDC relying party; baseURL (--public-url, else
// the address served on) gives the default redirect URL. It does no network I/O: the issuer is
// asked at the first sign-in.
func (o oidcConfig) relyingParty(baseURL string) (*auth.OIDC, error) {
	secret, err := oidcClientSecret(o.clientSecretFile)
	if err != nil {
		return nil, err
	}
	client, err := issuerClient(o.caFile)
	if err != nil {
		return nil, err
	}
	redirect := o.redirect(baseURL)
	var scopes []string
	for _, s := range strings.Split(o.scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			scopes = append(scopes, s)
		}
	}
	rp, err := auth.NewOIDC(auth.OIDCConfig{
		Issuer: o.issuer, ClientID: o.clientID, ClientSecret: secret, RedirectURL: redirect,
		Scopes: scopes, GroupsClaim: o.groupsClaim, HTTPClient: client,
	})
	if err != nil {
		return nil, fmt.Errorf("--auth oidc: %w", err)
	}
	return rp, nil
}

// redirect is --oidc-redirect-url, by default baseURL's callback (baseURL is
// --public-url when set, else the address served on).
func (o oidcConfig) redirect(baseURL string) string {
	if o.redirectURL != "" {
		return o.redirectURL
	}
	return strings.TrimSuffix(baseURL, "/") + urls.OIDCCallback
}

// oidcClientSecret reads the secret from file, else CLUSTERDESK_OIDC_CLIENT_SECRET
// (never from a flag: command lines are visible to every user of the machine).
func oidcClientSecret(file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--oidc-client-secret-file: %w", err)
		}
		if b = bytes.TrimSpace(b); len(b) == 0 {
			return "", fmt.Errorf("--oidc-client-secret-file %s is empty", file)
		}
		return string(b), nil
	}
	if v := os.Getenv("CLUSTERDESK_OIDC_CLIENT_SECRET"); v != "" {
		return v, nil
	}
	return "", errors.New("--auth oidc needs --oidc-client-secret-file or CLUSTERDESK_OIDC_CLIENT_SECRET")
}

// issuerClient talks to the issuer, trusting caFile besides the system roots.
func issuerClient(caFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--oidc-ca-file: %w", err)
		}
		roots, err := x509.SystemCertPool()
		if err != nil || roots == nil {
			roots = x509.NewCertPool()
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--oidc-ca-file %s: no PEM certificate in it", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: 15 * time.Second}, nil
}

// configureOIDC gives oidc mode's gate its relying party once the served
// address is known, and checks the gate.
func (s *signIn) configureOIDC(o oidcConfig, baseURL string) error {
	if s.mode != auth.ModeOIDC {
		return nil
	}
	rp, err := o.relyingParty(baseURL)
	if err != nil {
		return err
	}
	s.gate.OIDC = rp
	return s.gate.Check()
}
