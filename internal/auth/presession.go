package auth

import (
	"encoding/hex"
	"net/http"
	"time"
)

// The token-mode sign-in form is posted before there is a session, yet must
// not be forgeable (login CSRF: another site signing the browser in as the
// attacker, whose later actions the victim would then take). Its CSRF token is
// bound to a pre-session: a random id in a short-lived cookie sealed like the
// session (so it cannot be made up), issued with the form. A same-site
// attacker could still plant a pre-session cookie it obtained itself, with its
// token; the origin check (handlers/csrf.go) refuses such a post, so the token
// is the second lock, for clients that send neither Sec-Fetch-Site nor Origin.
const (
	preSessionCookie       = "clusterdesk_presession"
	securePreSessionCookie = "__Host-clusterdesk_presession"
	preSessionLife         = time.Hour
)

type preSession struct {
	ID       string    `json:"p"`
	IssuedAt time.Time `json:"i"`
}

func (s *Sessions) preSessionName() string {
	if s.Secure {
		return securePreSessionCookie
	}
	return preSessionCookie
}

// PreSessionBinding returns the CSRF binding of r's pre-session, if it has a
// valid one.
func (s *Sessions) PreSessionBinding(r *http.Request) (string, bool) {
	c, err := r.Cookie(s.preSessionName())
	if err != nil {
		return "", false
	}
	var p preSession
	if err := s.keys.Open(preSessionCookie, c.Value, &p); err != nil || p.ID == "" {
		return "", false
	}
	if age := s.now().Sub(p.IssuedAt); age < 0 || age > preSessionLife {
		return "", false
	}
	return "presession\x00" + p.ID, true
}

// PreSession returns r's pre-session binding, issuing a new pre-session cookie
// on w when r has none (or an old one).
func (s *Sessions) PreSession(w http.ResponseWriter, r *http.Request) (string, error) {
	if b, ok := s.PreSessionBinding(r); ok {
		return b, nil
	}
	p := preSession{ID: hex.EncodeToString(randomKey(16)), IssuedAt: s.now()}
	v, err := s.keys.Seal(preSessionCookie, p, false)
	if err != nil {
		return "", err
	}
	http.SetCookie(w, s.cookie(s.preSessionName(), v, int(preSessionLife/time.Second)))
	return "presession\x00" + p.ID, nil
}
