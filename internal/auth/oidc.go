package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"
)

// ModeOIDC: people sign in at an OpenID provider (authorization code flow
// with PKCE); the console acts with their ID token, which the API server
// trusts from the same issuer.
const ModeOIDC Mode = "oidc"

// DefaultOIDCScopes are asked for when none are configured: offline_access
// for a refresh token, groups for the groups claim.
var DefaultOIDCScopes = []string{oidc.ScopeOpenID, "profile", "email", "groups", oidc.ScopeOfflineAccess}

// OIDCConfig is the console as an OpenID Connect relying party.
type OIDCConfig struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURL is the console's callback as the provider sends the
	// browser back to it (its path is handlers' /login/oidc/callback).
	RedirectURL string
	Scopes      []string // DefaultOIDCScopes if empty
	// GroupsClaim names the ID token claim that lists the person's groups
	// (shown and logged; the API server maps the token's claims itself).
	GroupsClaim string
	// HTTPClient talks to the issuer (trusting its CA); nil is a client with
	// the system roots and a 10 s timeout.
	HTTPClient *http.Client
}

// OIDC signs people in at the issuer: the authorization code flow with PKCE
// (S256), state and nonce, ID tokens verified by github.com/coreos/go-oidc
// (signature against the issuer's published keys, issuer, audience = the
// client id, expiry) and refreshed with golang.org/x/oauth2. The issuer is
// discovered on first use, not at start, so a provider that is down when the
// console starts only makes sign-ins fail (with a page saying so) until it is back.
type OIDC struct {
	cfg OIDCConfig
	now func() time.Time

	mu       sync.Mutex
	oauth    *oauth2.Config
	verifier *oidc.IDTokenVerifier

	// renewals lets one request per session renew its ID token while the
	// others wait for it: the provider rotates the refresh token on use, so
	// two renewals with the same refresh token would end the session. (Across
	// replicas the same holds only if one renews at a time: see OIDCSession.)
	renewals singleflight.Group
	// renewed are this replica's recent renewals, for requests that still
	// carry the cookie a renewal replaced (oidc_renewals.go).
	renewed recentRenewals
}

// NewOIDC checks cfg and returns the relying party. It does no network I/O.
func NewOIDC(cfg OIDCConfig) (*OIDC, error) {
	u, err := url.Parse(cfg.Issuer)
	switch {
	case cfg.Issuer == "" || err != nil || u.Host == "":
		return nil, fmt.Errorf("the issuer URL %q is not an absolute URL", cfg.Issuer)
	case u.Scheme != "https" && !loopbackHost(u.Hostname()):
		// OpenID Connect Discovery 1.0 §3: the issuer uses https. Plain HTTP
		// is tolerated on loopback only (a provider on the same machine).
		return nil, fmt.Errorf("the issuer URL %s must use https", cfg.Issuer)
	case cfg.ClientID == "":
		return nil, errors.New("no client id")
	case cfg.ClientSecret == "":
		return nil, errors.New("no client secret (the console is a confidential client)")
	}
	r, err := url.Parse(cfg.RedirectURL)
	if cfg.RedirectURL == "" || err != nil || r.Host == "" || (r.Scheme != "https" && r.Scheme != "http") {
		return nil, fmt.Errorf("the redirect URL %q is not an absolute http(s) URL", cfg.RedirectURL)
	}
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = DefaultOIDCScopes
	}
	if !containsString(cfg.Scopes, oidc.ScopeOpenID) {
		cfg.Scopes = append([]string{oidc.ScopeOpenID}, cfg.Scopes...)
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "groups"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	return &OIDC{cfg: cfg, now: time.Now}, nil
}

// Issuer is the issuer URL, for pages and logs.
func (o *OIDC) Issuer() string { return o.cfg.Issuer }

// ClientID is the console's client id at the issuer.
func (o *OIDC) ClientID() string { return o.cfg.ClientID }

func loopbackHost(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ctx carries the issuer's HTTP client to go-oidc and x/oauth2.
func (o *OIDC) ctx(ctx context.Context) context.Context {
	return oidc.ClientContext(context.WithValue(ctx, oauth2.HTTPClient, o.cfg.HTTPClient), o.cfg.HTTPClient)
}

// discover returns the OAuth2 endpoints and the ID token verifier, asking
// the issuer's discovery document the first time (and again after a failure).
func (o *OIDC) discover(ctx context.Context) (*oauth2.Config, *oidc.IDTokenVerifier, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.oauth != nil {
		return o.oauth, o.verifier, nil
	}
	p, err := oidc.NewProvider(o.ctx(ctx), o.cfg.Issuer)
	if err != nil {
		return nil, nil, &OIDCError{Kind: OIDCIssuerUnreachable, Detail: "discovery at " + o.cfg.Issuer + " failed", Err: err}
	}
	o.oauth = &oauth2.Config{
		ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret,
		Endpoint: p.Endpoint(), RedirectURL: o.cfg.RedirectURL, Scopes: o.cfg.Scopes,
	}
	// The verifier's key set fetches with the client NewProvider was given.
	o.verifier = p.Verifier(&oidc.Config{ClientID: o.cfg.ClientID, Now: o.now})
	return o.oauth, o.verifier, nil
}

// authCodeURL is where the browser goes to sign in for flight f.
func (o *OIDC) authCodeURL(ctx context.Context, f oidcFlight) (string, error) {
	conf, _, err := o.discover(ctx)
	if err != nil {
		return "", err
	}
	return conf.AuthCodeURL(f.State, oauth2.S256ChallengeOption(f.Verifier), oidc.Nonce(f.Nonce)), nil
}

// finish checks the provider's answer q (the callback's query) against the
// flight that started it and, if it holds, exchanges the code for tokens and
// verifies the ID token. The checks that need no network come first, so a
// forged or replayed callback costs the issuer nothing.
func (o *OIDC) finish(ctx context.Context, q url.Values, f oidcFlight, haveFlight bool) (OIDCSession, error) {
	if e := q.Get("error"); e != "" {
		kind := OIDCProviderError
		if e == "access_denied" {
			kind = OIDCDenied
		}
		return OIDCSession{}, &OIDCError{Kind: kind, Detail: providerErrorText(e, q.Get("error_description"))}
	}
	state := q.Get("state")
	switch {
	case !haveFlight:
		return OIDCSession{}, &OIDCError{Kind: OIDCStateMissing, Detail: "no sign-in is under way in this browser"}
	case state == "" || subtle.ConstantTimeCompare([]byte(state), []byte(f.State)) != 1:
		return OIDCSession{}, &OIDCError{Kind: OIDCStateMismatch, Detail: "the state parameter is not the one this browser's sign-in sent"}
	case q.Get("code") == "":
		return OIDCSession{}, &OIDCError{Kind: OIDCProviderError, Detail: "the provider sent no authorization code"}
	}
	conf, verifier, err := o.discover(ctx)
	if err != nil {
		return OIDCSession{}, err
	}
	tok, err := conf.Exchange(o.ctx(ctx), q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return OIDCSession{}, exchangeError(err)
	}
	sess, idt, err := o.verify(ctx, verifier, tok)
	if err != nil {
		return OIDCSession{}, err
	}
	if err := checkNonce(idt, f.Nonce); err != nil {
		return OIDCSession{}, err
	}
	return sess, nil
}

// checkNonce: the ID token must carry the nonce this browser's flight sent
// (OpenID Connect Core 1.0 §3.1.3.7 step 11), so a token minted for another
// sign-in cannot be injected into this one.
func checkNonce(idt *oidc.IDToken, want string) error {
	if want == "" || subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(want)) != 1 {
		return &OIDCError{Kind: OIDCNonceMismatch, Detail: "the ID token's nonce is not the one this sign-in sent"}
	}
	return nil
}

// verify checks tok's ID token and reads the session from it.
func (o *OIDC) verify(ctx context.Context, verifier *oidc.IDTokenVerifier, tok *oauth2.Token) (OIDCSession, *oidc.IDToken, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return OIDCSession{}, nil, &OIDCError{Kind: OIDCTokenInvalid, Detail: "the provider's token response has no ID token"}
	}
	idt, err := verifier.Verify(o.ctx(ctx), raw)
	if err != nil {
		return OIDCSession{}, nil, &OIDCError{Kind: OIDCTokenInvalid, Detail: "the ID token did not verify", Err: err}
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return OIDCSession{}, nil, &OIDCError{Kind: OIDCTokenInvalid, Detail: "the ID token's claims do not decode", Err: err}
	}
	return OIDCSession{
		IDToken: raw, RefreshToken: tok.RefreshToken,
		IssuedAt: idt.IssuedAt, Expiry: idt.Expiry,
		Subject: idt.Subject, Name: displayName(claims, idt.Subject),
		Groups: groupsClaim(claims, o.cfg.GroupsClaim),
	}, idt, nil
}

// refresh trades s's refresh token for a new ID token (the refresh token may
// rotate). The new token must be for the same subject (OpenID Connect Core
// 1.0 §12.2).
func (o *OIDC) refresh(ctx context.Context, s OIDCSession) (OIDCSession, error) {
	if s.RefreshToken == "" {
		return OIDCSession{}, &OIDCError{Kind: OIDCRefreshFailed, Detail: "the provider gave no refresh token (is offline_access among the scopes?)"}
	}
	conf, verifier, err := o.discover(ctx)
	if err != nil {
		return OIDCSession{}, err
	}
	tok, err := conf.TokenSource(o.ctx(ctx), &oauth2.Token{RefreshToken: s.RefreshToken}).Token()
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re):
		return OIDCSession{}, &OIDCError{Kind: OIDCRefreshFailed, Detail: "the provider refused to renew the sign-in: " + providerErrorText(re.ErrorCode, re.ErrorDescription), Err: err}
	case err != nil:
		return OIDCSession{}, &OIDCError{Kind: OIDCIssuerUnreachable, Detail: "the token endpoint did not answer", Err: err}
	}
	next, _, err := o.verify(ctx, verifier, tok)
	if err != nil {
		return OIDCSession{}, &OIDCError{Kind: OIDCRefreshFailed, Detail: "the renewed ID token is not valid", Err: err}
	}
	if next.Subject != s.Subject {
		return OIDCSession{}, &OIDCError{Kind: OIDCRefreshFailed, Detail: "the renewed ID token names another subject"}
	}
	return next, nil
}

// exchangeError tells an issuer that could not be reached from one that
// refused the code (used already, PKCE verifier wrong, client secret wrong).
func exchangeError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return &OIDCError{Kind: OIDCExchangeFailed, Detail: "the provider refused the authorization code: " + providerErrorText(re.ErrorCode, re.ErrorDescription), Err: err}
	}
	return &OIDCError{Kind: OIDCIssuerUnreachable, Detail: "the token endpoint did not answer", Err: err}
}

// providerErrorText is the provider's error code and description, bounded:
// they come from the query string, which anyone can write.
func providerErrorText(code, desc string) string {
	s := code
	if desc != "" {
		s += ": " + desc
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ToValidUTF8(s, "")
}

// displayName is the claim a person recognises: preferred_username, name,
// email, else the subject.
func displayName(claims map[string]any, sub string) string {
	for _, k := range []string{"preferred_username", "name", "email"} {
		if v, ok := claims[k].(string); ok && v != "" {
			return v
		}
	}
	return sub
}

// groupsClaim reads a groups claim that is a list of strings or one string
// (both occur; kube-apiserver accepts both too: staging/src/k8s.io/apiserver/
// plugin/pkg/authenticator/token/oidc/oidc.go, stringOrArray).
func groupsClaim(claims map[string]any, name string) []string {
	switch v := claims[name].(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, g := range v {
			if s, ok := g.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
