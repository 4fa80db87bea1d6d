package auth

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// OIDCSession is a verified OIDC sign-in or renewal: the ID token (the
// bearer token of every request to the API server), the refresh token that
// renews it, and what the ID token says.
//
// Only the tokens and the expiry are kept, sealed in the session cookie as
// its Credentials (credentials, oidcOf): every replica sharing the session
// keys can act for the person and renew the token, and no replica keeps
// sessions of its own. Providers rotate the refresh token on use, so a
// renewal writes the new credentials back (a new cookie on the response);
// two replicas renewing the same session at once see one of them refused
// (Gate.identifyOIDC then keeps the still-valid token).
type OIDCSession struct {
	IDToken      string
	RefreshToken string
	IssuedAt     time.Time // the ID token's iat
	Expiry       time.Time // the ID token's exp
	Subject      string
	Name         string   // preferred_username, name or email
	Groups       []string // the configured groups claim
}

// maxRenewMargin is how long before expiry an ID token is renewed at most:
// a request that starts just before exp must not reach the API server after it.
const maxRenewMargin = time.Minute

// RenewAt is when the session's ID token should be renewed: a minute before
// it expires, or half-way through its life if that is shorter (tokens of a
// few seconds, as in the refresh tests).
func (o OIDCSession) RenewAt() time.Time {
	margin := maxRenewMargin
	if life := o.Expiry.Sub(o.IssuedAt); o.IssuedAt.IsZero() || life <= 0 {
		margin = 0
	} else if life/2 < margin {
		margin = life / 2
	}
	return o.Expiry.Add(-margin)
}

// credentials is what of o the session cookie keeps. The ID token goes in
// once, as IDToken (Token stays empty): it is most of the cookie's size.
func (o OIDCSession) credentials() Credentials {
	return Credentials{IDToken: o.IDToken, RefreshToken: o.RefreshToken, Expiry: o.Expiry}
}

// oidcOf reads a session's credentials back as an OIDCSession: the subject
// and issue time come from the ID token's claims. They are read without
// checking the signature again: go-oidc verified the token before it was
// sealed into the cookie, which nobody without the keys can change. ok is
// false for credentials that are no OIDC sign-in's.
func oidcOf(c Credentials) (OIDCSession, bool) {
	if c.IDToken == "" {
		return OIDCSession{}, false
	}
	parts := strings.Split(c.IDToken, ".")
	if len(parts) != 3 {
		return OIDCSession{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return OIDCSession{}, false
	}
	var claims struct {
		Subject  string `json:"sub"`
		IssuedAt int64  `json:"iat"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.Subject == "" {
		return OIDCSession{}, false
	}
	o := OIDCSession{IDToken: c.IDToken, RefreshToken: c.RefreshToken, Expiry: c.Expiry, Subject: claims.Subject}
	if claims.IssuedAt > 0 {
		o.IssuedAt = time.Unix(claims.IssuedAt, 0)
	}
	return o, true
}
