package main

import (
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// ScopeGroups asks for the groups claim. The ID token carries the claim
// whether or not it is asked for (kube-apiserver and oauth2-proxy read it from
// there), but clients that ask for it, as Dex users do, must not be refused.
const ScopeGroups = "groups"

// client is a Config client as zitadel's op.Client: a confidential web
// application that uses the authorization code flow (PKCE when the request
// carries a code_challenge), refresh tokens, and redirect URIs matched by glob.
type client struct {
	Client
	lifetime time.Duration
}

var _ op.HasRedirectGlobs = (*client)(nil)

func (c *client) GetID() string                        { return c.ID }
func (c *client) RedirectURIs() []string               { return nil }
func (c *client) PostLogoutRedirectURIs() []string     { return nil }
func (c *client) RedirectURIGlobs() []string           { return c.Client.RedirectURIGlobs }
func (c *client) PostLogoutRedirectURIGlobs() []string { return c.Client.PostLogoutRedirectURIGlobs }
func (c *client) ApplicationType() op.ApplicationType  { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() oidc.AuthMethod          { return oidc.AuthMethodBasic }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
}
func (c *client) LoginURL(authRequestID string) string {
	return loginPath + "?" + authRequestParam + "=" + authRequestID
}
func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeBearer }
func (c *client) IDTokenLifetime() time.Duration      { return c.lifetime }

// DevMode lets the redirect URIs be plain http on loopback, where the
// console and oauth2-proxy listen in tests.
func (c *client) DevMode() bool { return true }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}
func (c *client) IsScopeAllowed(scope string) bool { return scope == ScopeGroups }

// IDTokenUserinfoClaimsAssertion puts email and name in the ID token, as most
// providers do, so clients need not call the userinfo endpoint.
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *client) ClockSkew() time.Duration             { return 0 }
