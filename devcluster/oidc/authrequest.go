package main

import (
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// authRequest is one sign-in in progress: created when a client sends the
// browser to /authorize, completed by the login form, exchanged for tokens once.
type authRequest struct {
	id            string
	created       time.Time
	clientID      string
	redirectURI   string
	state         string
	nonce         string
	scopes        []string
	responseType  oidc.ResponseType
	responseMode  oidc.ResponseMode
	codeChallenge *oidc.CodeChallenge

	userID   string // set by the login form
	authTime time.Time
	done     bool
}

var _ op.AuthRequest = (*authRequest)(nil)

func newAuthRequest(id string, r *oidc.AuthRequest) *authRequest {
	a := &authRequest{
		id:           id,
		created:      time.Now(),
		clientID:     r.ClientID,
		redirectURI:  r.RedirectURI,
		state:        r.State,
		nonce:        r.Nonce,
		scopes:       r.Scopes,
		responseType: r.ResponseType,
		responseMode: r.ResponseMode,
	}
	if r.CodeChallenge != "" {
		// The method is passed on as sent, so oidc.VerifyCodeChallenge
		// refuses one it does not support instead of treating it as plain.
		a.codeChallenge = &oidc.CodeChallenge{Challenge: r.CodeChallenge, Method: r.CodeChallengeMethod}
	}
	return a
}

func (a *authRequest) GetID() string                         { return a.id }
func (a *authRequest) GetACR() string                        { return "" }
func (a *authRequest) GetAudience() []string                 { return []string{a.clientID} }
func (a *authRequest) GetAuthTime() time.Time                { return a.authTime }
func (a *authRequest) GetClientID() string                   { return a.clientID }
func (a *authRequest) GetNonce() string                      { return a.nonce }
func (a *authRequest) GetRedirectURI() string                { return a.redirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType    { return a.responseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode    { return a.responseMode }
func (a *authRequest) GetScopes() []string                   { return a.scopes }
func (a *authRequest) GetState() string                      { return a.state }
func (a *authRequest) GetSubject() string                    { return a.userID }
func (a *authRequest) Done() bool                            { return a.done }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return a.codeChallenge }

// GetAMR says a password was used, once the form was completed.
func (a *authRequest) GetAMR() []string {
	if a.done {
		return []string{"pwd"}
	}
	return nil
}

// refreshToken is what a refresh token stands for; the token string is its key.
type refreshToken struct {
	token         string
	clientID      string
	userID        string
	audience      []string
	scopes        []string
	amr           []string
	authTime      time.Time
	expiration    time.Time
	accessTokenID string
}

// refreshRequest is a refreshToken as op.RefreshTokenRequest.
type refreshRequest struct{ *refreshToken }

var _ op.RefreshTokenRequest = refreshRequest{}

func (r refreshRequest) GetAMR() []string            { return r.amr }
func (r refreshRequest) GetAudience() []string       { return r.audience }
func (r refreshRequest) GetAuthTime() time.Time      { return r.authTime }
func (r refreshRequest) GetClientID() string         { return r.clientID }
func (r refreshRequest) GetScopes() []string         { return r.scopes }
func (r refreshRequest) GetSubject() string          { return r.userID }
func (r refreshRequest) SetCurrentScopes(s []string) { r.scopes = s }
