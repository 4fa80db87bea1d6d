package auth

import (
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// OIDCSession is what an OIDC sign-in keeps besides the identity the console
// acts as: the ID token (the bearer token of every request to the API server),
// the refresh token that renews it, and when it expires.
//
// It is the one seam between OIDC sign-in and session storage: today it
// lives in the Store entry the session cookie names (PutOIDC, OIDCOf,
// ReplaceOIDC); sealed into the session cookie instead, it is all a replica
// needs to act for the person and renew the token. The JSON names are short
// for that. One caution for that move: providers rotate the refresh token on
// use, so a renewal must write the new OIDCSession back (a new cookie) and
// two replicas renewing the same session at once will see one of them
// refused (Gate.identifyOIDC then keeps the still-valid token).
type OIDCSession struct {
	IDToken      string    `json:"t"`
	RefreshToken string    `json:"r,omitempty"`
	IssuedAt     time.Time `json:"ia"` // the ID token's iat
	Expiry       time.Time `json:"e"`  // the ID token's exp
	Subject      string    `json:"s"`
	Name         string    `json:"n,omitempty"` // preferred_username, name or email
	Groups       []string  `json:"g,omitempty"` // the configured groups claim
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

// PutOIDC keeps id (acting with o's ID token) and o until expires, and
// returns the new session id naming them.
func (s *Store) PutOIDC(id kube.Identity, o OIDCSession, expires time.Time) string {
	sid := s.Put(id, expires)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[sid]; ok {
		e.oidc = &o
		s.entries[sid] = e
	}
	return sid
}

// OIDCOf returns the identity and OIDC session of session id sid, if it is
// kept, not expired and from an OIDC sign-in.
func (s *Store) OIDCOf(sid string) (kube.Identity, OIDCSession, bool) {
	id, ok := s.Get(sid)
	if !ok {
		return kube.Identity{}, OIDCSession{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[sid]
	if !ok || e.oidc == nil {
		return kube.Identity{}, OIDCSession{}, false
	}
	return id, *e.oidc, true
}

// ReplaceOIDC puts a renewed identity and OIDC session in place of session
// sid's, keeping its expiry. It reports false when the session is gone
// (signed out meanwhile): the renewal is then dropped.
func (s *Store) ReplaceOIDC(sid string, id kube.Identity, o OIDCSession) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[sid]
	if !ok || e.oidc == nil {
		return false
	}
	e.id, e.oidc = id, &o
	s.entries[sid] = e
	return true
}
