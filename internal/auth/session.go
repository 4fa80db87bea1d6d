// Package auth holds sign-in and sessions: the one-time login token of local mode
// and the encrypted, signed session cookie every route but health and static needs.
package auth

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"time"
)

// CookieName is the session cookie's name over plain HTTP; SecureCookieName
// replaces it when the console is served over TLS (browsers accept the
// __Host- prefix only on Secure cookies).
const (
	CookieName       = "clusterdesk_session"
	SecureCookieName = "__Host-clusterdesk_session"
)

// Session is what the cookie carries, sealed (seal.go): the browser holds it
// but can neither read nor change it, and every replica sharing the keys can
// open it, so no replica keeps sessions of its own. ID names the session in
// every mode: sign-out revokes it (Revoker) and CSRF tokens are bound to it
// (csrf.go).
type Session struct {
	ID       string    `json:"id"`
	User     string    `json:"u"`
	Groups   []string  `json:"g,omitempty"`
	IssuedAt time.Time `json:"i"`
	LastSeen time.Time `json:"l"`
	// Creds are what the console acts with for the user: none in local mode
	// (the kubeconfig's identity), the pasted bearer token in token mode.
	Creds Credentials `json:"c,omitzero"`
}

// Credentials are a session's secrets. They never leave the sealed cookie
// except to the API server: String and LogValue hide them.
type Credentials struct {
	// Token is the bearer token the console sends for the user (token mode;
	// in OIDC mode the ID token).
	Token string `json:"t,omitempty"`
	// IDToken, RefreshToken and Expiry are for an OIDC sign-in: the ID token
	// as issued, the refresh token that renews it, and when it expires.
	IDToken      string    `json:"it,omitempty"`
	RefreshToken string    `json:"rt,omitempty"`
	Expiry       time.Time `json:"e,omitzero"`
}

// String hides the secrets (%v of a Session prints this).
func (Credentials) String() string { return "[credentials]" }

// GoString hides the secrets (%#v).
func (Credentials) GoString() string { return "[credentials]" }

// LogValue hides the secrets in slog.
func (Credentials) LogValue() slog.Value { return slog.StringValue("[credentials]") }

// Sessions issues and verifies session cookies, sealed with Keys.
type Sessions struct {
	keys     *Keys
	Idle     time.Duration // a session unused this long is over
	Absolute time.Duration // a session this old is over, used or not
	Secure   bool          // set the Secure attribute (served over TLS)
	// Revocations holds the sessions signed out before their cookie
	// expired: the cookie alone would otherwise keep working (a copy of it
	// survives "Log out"). NewSessions sets an in-memory one; replicas share
	// one kept in the cluster (SharedRevoker).
	Revocations Revoker
	now         func() time.Time
}

// Errors a request's session can have.
var (
	ErrNoSession = errors.New("no session")
	ErrExpired   = errors.New("session expired")
	ErrSignedOut = errors.New("signed out")
	// ErrNotReady: the sign-outs kept in the cluster are not known to be
	// current (the replica just started, or its watch is broken or behind,
	// SharedRevoker): no session is accepted, rather than one that may have
	// been signed out.
	ErrNotReady = errors.New("sign-outs not known yet")
)

// NewSessions makes a session manager with a fresh random key: restarting the
// console signs everyone out, which is right for local mode.
func NewSessions() *Sessions { return NewSessionsWithKeys(RandomKeys()) }

// NewSessionsWithKeys makes a session manager sealing with keys, which
// replicas share (LoadKeys). Its Revocations are in memory: replicas set a
// shared one.
func NewSessionsWithKeys(keys *Keys) *Sessions {
	return &Sessions{
		keys:        keys,
		Idle:        15 * time.Minute,
		Absolute:    8 * time.Hour,
		Revocations: NewMemoryRevoker(DefaultRevocations),
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

// Start writes a new session cookie for user (local mode: no credentials).
func (s *Sessions) Start(w http.ResponseWriter, user string) error {
	_, err := s.StartWith(w, nil, Session{User: user})
	return err
}

// StartWith writes a new session cookie for sess (user, groups,
// credentials), giving it a fresh id and clock. r, if set, is the request,
// whose leftover cookie parts are cleared. It returns the session started.
func (s *Sessions) StartWith(w http.ResponseWriter, r *http.Request, sess Session) (Session, error) {
	now := s.now()
	sess.ID = hex.EncodeToString(randomKey(16))
	sess.IssuedAt, sess.LastSeen = now, now
	return sess, s.write(w, r, sess)
}

// Name is the session cookie's name: SecureCookieName when Secure is set.
func (s *Sessions) Name() string {
	if s.Secure {
		return SecureCookieName
	}
	return CookieName
}

func (s *Sessions) write(w http.ResponseWriter, r *http.Request, sess Session) error {
	v, err := s.keys.Seal(sessionPurpose, sess, false)
	if err != nil {
		return err
	}
	if len(v) > cookiePartBytes {
		// Deflating costs a 1 MB buffer and milliseconds per seal (the
		// benchmark in seal_test.go), so only a session too large for
		// one cookie (OIDC tokens) pays it, to need fewer parts. Every byte
		// of a session is its owner's, so its sealed length tells no secret
		// to anyone else (seal.go).
		if z, err := s.keys.Seal(sessionPurpose, sess, true); err == nil && len(z) < len(v) {
			v = z
		}
	}
	return s.setParts(w, r, v, int(s.Absolute/time.Second))
}

const sessionPurpose = "session"

// Check returns the request's session, refreshing its idle clock on w at most
// once a minute (so most requests do not rewrite the cookie).
func (s *Sessions) Check(w http.ResponseWriter, r *http.Request) (Session, error) {
	return s.check(w, r, true)
}

// CheckQuiet is Check leaving the idle clock as the request found it: an
// event stream is not activity (an open tab would otherwise keep its session
// alive for ever), and the stream ends when the session's idle time does.
func (s *Sessions) CheckQuiet(r *http.Request) (Session, error) {
	return s.check(nil, r, false)
}

func (s *Sessions) check(w http.ResponseWriter, r *http.Request, refresh bool) (Session, error) {
	sess, err := s.Peek(r)
	if err != nil {
		return Session{}, err
	}
	now := s.now()
	if now.Sub(sess.IssuedAt) > s.Absolute || now.Sub(sess.LastSeen) > s.Idle {
		return Session{}, ErrExpired
	}
	if s.Revocations != nil {
		if ready, ok := s.Revocations.(interface{ Ready() bool }); ok && !ready.Ready() {
			return Session{}, ErrNotReady
		}
		if s.Revocations.Revoked(sess) {
			return Session{}, ErrSignedOut
		}
	}
	if refresh && now.Sub(sess.LastSeen) > time.Minute {
		sess.LastSeen = now
		if err := s.write(w, r, sess); err != nil {
			return Session{}, err
		}
	}
	return sess, nil
}

// Peek opens the request's session cookie without checking its age.
func (s *Sessions) Peek(r *http.Request) (Session, error) {
	v, ok := s.parts(r)
	if !ok {
		return Session{}, ErrNoSession
	}
	var sess Session
	// A session without an id could be neither revoked nor bound to CSRF tokens.
	if err := s.keys.Open(sessionPurpose, v, &sess); err != nil || sess.ID == "" {
		return Session{}, ErrNoSession
	}
	return sess, nil
}

// Until is when sess ends at the latest (its absolute expiry): a revocation
// need not be kept longer.
func (s *Sessions) Until(sess Session) time.Time { return sess.IssuedAt.Add(s.Absolute) }

// End clears the session cookie.
func (s *Sessions) End(w http.ResponseWriter) {
	http.SetCookie(w, s.cookie(s.Name(), "", -1))
}

// EndRequest clears the session cookie and whatever further parts of it r
// carries (a session too large for one cookie, cookie_parts.go).
func (s *Sessions) EndRequest(w http.ResponseWriter, r *http.Request) {
	s.End(w)
	s.clearPartsFrom(w, r, 1)
}

func (s *Sessions) cookie(name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: s.Secure, SameSite: http.SameSiteStrictMode}
}
