// Package auth holds sign-in and sessions: the one-time login token of local mode
// and the encrypted, signed session cookie every route but health and static needs.
package auth

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"
)

// CookieName is the session cookie's name over plain HTTP; SecureCookieName
// replaces it when the console is served over TLS (browsers accept the
// __Host- prefix only on Secure cookies).
const (
	CookieName       = "clusterdesk_session"
	SecureCookieName = "__Host-clusterdesk_session"
)

// Session is what the cookie carries. It holds no Kubernetes credential: in
// local mode the console acts with its kubeconfig's identity; in token mode SID
// names the server-side Store entry that holds the user's token. ID names the
// session itself in every mode: sign-out revokes it (Revoker) and CSRF tokens
// are bound to it (csrf.go). It is not the Store key, so neither can be
// derived from the other.
type Session struct {
	ID       string    `json:"id"`
	User     string    `json:"u"`
	SID      string    `json:"s,omitempty"`
	IssuedAt time.Time `json:"i"`
	LastSeen time.Time `json:"l"`
}

// Sessions issues and verifies session cookies. Cookies are encrypted (AES) and
// authenticated (HMAC) by gorilla/securecookie, so a client can neither read nor forge one.
type Sessions struct {
	codec    *securecookie.SecureCookie
	Idle     time.Duration // a session unused this long is over
	Absolute time.Duration // a session this old is over, used or not
	Secure   bool          // set the Secure attribute (served over TLS)
	// Revocations holds the ids of sessions signed out before their cookie
	// expired: the cookie alone would otherwise keep working (a copy of it
	// survives "Log out"). NewSessions sets an in-memory one.
	Revocations Revoker
	csrfKey     []byte // keys the CSRF tokens (csrf.go)
	now         func() time.Time
}

// Errors a request's session can have.
var (
	ErrNoSession = errors.New("no session")
	ErrExpired   = errors.New("session expired")
	ErrSignedOut = errors.New("signed out")
)

// NewSessions makes a session manager with fresh random keys: restarting the
// console signs everyone out, which is right for local mode.
func NewSessions() *Sessions {
	return &Sessions{
		codec:    securecookie.New(randomKey(32), randomKey(32)).SetSerializer(securecookie.JSONEncoder{}),
		Idle:     15 * time.Minute,
		Absolute: 8 * time.Hour,
		// Replicas need a shared Revoker and shared keys (the team-service issue).
		Revocations: NewMemoryRevoker(DefaultRevocations),
		csrfKey:     randomKey(32),
		now:         time.Now,
	}
}

func randomKey(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error()) // the OS has no entropy: nothing is safe to serve
	}
	return b
}

// Start writes a new session cookie for user.
func (s *Sessions) Start(w http.ResponseWriter, user string) error {
	return s.StartWith(w, user, "")
}

// StartWith writes a new session cookie for user naming the server-side session sid.
func (s *Sessions) StartWith(w http.ResponseWriter, user, sid string) error {
	now := s.now()
	return s.write(w, Session{ID: hex.EncodeToString(randomKey(16)), User: user, SID: sid, IssuedAt: now, LastSeen: now})
}

// Name is the session cookie's name: SecureCookieName when Secure is set.
func (s *Sessions) Name() string {
	if s.Secure {
		return SecureCookieName
	}
	return CookieName
}

// Expires reports when a session started now ends at the latest.
func (s *Sessions) Expires() time.Time { return s.now().Add(s.Absolute) }

func (s *Sessions) write(w http.ResponseWriter, sess Session) error {
	v, err := s.codec.Encode(CookieName, sess)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name: s.Name(), Value: v, Path: "/",
		HttpOnly: true, Secure: s.Secure, SameSite: http.SameSiteStrictMode,
		MaxAge: int(s.Absolute / time.Second),
	})
	return nil
}

// Check returns the request's session, refreshing its idle clock on w at most
// once a minute (so most requests do not rewrite the cookie).
func (s *Sessions) Check(w http.ResponseWriter, r *http.Request) (Session, error) {
	sess, err := s.Peek(r)
	if err != nil {
		return Session{}, err
	}
	now := s.now()
	if now.Sub(sess.IssuedAt) > s.Absolute || now.Sub(sess.LastSeen) > s.Idle {
		return Session{}, ErrExpired
	}
	if s.Revocations != nil && s.Revocations.Revoked(sess.ID) {
		return Session{}, ErrSignedOut
	}
	if now.Sub(sess.LastSeen) > time.Minute {
		sess.LastSeen = now
		if err := s.write(w, sess); err != nil {
			return Session{}, err
		}
	}
	return sess, nil
}

// Peek decodes the request's session cookie without checking its age.
func (s *Sessions) Peek(r *http.Request) (Session, error) {
	c, err := r.Cookie(s.Name())
	if err != nil {
		return Session{}, ErrNoSession
	}
	var sess Session
	// A session without an id could be neither revoked nor bound to CSRF tokens.
	if err := s.codec.Decode(CookieName, c.Value, &sess); err != nil || sess.ID == "" {
		return Session{}, ErrNoSession
	}
	return sess, nil
}

// Until is when sess ends at the latest (its absolute expiry): a revocation
// need not be kept longer.
func (s *Sessions) Until(sess Session) time.Time { return sess.IssuedAt.Add(s.Absolute) }

// End clears the session cookie.
func (s *Sessions) End(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: s.Name(), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.Secure, SameSite: http.SameSiteStrictMode})
}
