// Package auth holds sign-in and sessions: the one-time login token of local mode
// and the encrypted, signed session cookie every route but health and static needs.
package auth

import (
	"crypto/rand"
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/securecookie"
)

// CookieName is the session cookie's name.
const CookieName = "clusterdesk_session"

// Session is what the cookie carries. It holds no Kubernetes credential: in
// local mode the console acts with its kubeconfig's identity.
type Session struct {
	User     string    `json:"u"`
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
	now      func() time.Time
}

// Errors a request's session can have.
var (
	ErrNoSession = errors.New("no session")
	ErrExpired   = errors.New("session expired")
)

// NewSessions makes a session manager with fresh random keys: restarting the
// console signs everyone out, which is right for local mode.
func NewSessions() *Sessions {
	return &Sessions{
		codec:    securecookie.New(randomKey(32), randomKey(32)).SetSerializer(securecookie.JSONEncoder{}),
		Idle:     15 * time.Minute,
		Absolute: 8 * time.Hour,
		now:      time.Now,
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
	now := s.now()
	return s.write(w, Session{User: user, IssuedAt: now, LastSeen: now})
}

func (s *Sessions) write(w http.ResponseWriter, sess Session) error {
	v, err := s.codec.Encode(CookieName, sess)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: v, Path: "/",
		HttpOnly: true, Secure: s.Secure, SameSite: http.SameSiteStrictMode,
		MaxAge: int(s.Absolute / time.Second),
	})
	return nil
}

// Check returns the request's session, refreshing its idle clock on w at most
// once a minute (so most requests do not rewrite the cookie).
func (s *Sessions) Check(w http.ResponseWriter, r *http.Request) (Session, error) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return Session{}, ErrNoSession
	}
	var sess Session
	if err := s.codec.Decode(CookieName, c.Value, &sess); err != nil {
		return Session{}, ErrNoSession
	}
	now := s.now()
	if now.Sub(sess.IssuedAt) > s.Absolute || now.Sub(sess.LastSeen) > s.Idle {
		return Session{}, ErrExpired
	}
	if now.Sub(sess.LastSeen) > time.Minute {
		sess.LastSeen = now
		if err := s.write(w, sess); err != nil {
			return Session{}, err
		}
	}
	return sess, nil
}

// End clears the session cookie.
func (s *Sessions) End(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.Secure, SameSite: http.SameSiteStrictMode})
}
