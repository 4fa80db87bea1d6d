package auth

import (
	"encoding/base64"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// An OIDC sign-in under way (a flight) needs its state, nonce and PKCE
// verifier again when the provider sends the browser back. They are kept
// like the pre-session of the token form (presession.go): in a short-lived
// cookie sealed with the session keys (shared by the replicas, keys.go; its
// own purpose, so no flight opens as a session or the other way round), not in server memory, so whichever
// replica gets the callback can finish it. Unlike the pre-session it is
// SameSite=Lax: the callback is a top-level navigation from the provider's
// site, which does not carry Strict cookies.
const (
	oidcFlightCookie       = "clusterdesk_oidc"
	secureOIDCFlightCookie = "__Host-clusterdesk_oidc"
	// oidcFlightLife bounds how long a person may take at the provider's form.
	oidcFlightLife = 10 * time.Minute
)

type oidcFlight struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"` // the PKCE code verifier (RFC 7636)
	IssuedAt time.Time `json:"i"`
}

func (s *Sessions) oidcFlightName() string {
	if s.Secure {
		return secureOIDCFlightCookie
	}
	return oidcFlightCookie
}

// newOIDCFlight makes a flight with fresh secrets and seals it into a cookie
// on w. A flight already under way in this browser is replaced (its callback
// will be refused as not this browser's).
func (s *Sessions) newOIDCFlight(w http.ResponseWriter) (oidcFlight, error) {
	f := oidcFlight{
		State:    randomText(24),
		Nonce:    randomText(24),
		Verifier: oauth2.GenerateVerifier(),
		IssuedAt: s.now(),
	}
	v, err := s.keys.Seal(oidcFlightCookie, f, false)
	if err != nil {
		return oidcFlight{}, err
	}
	http.SetCookie(w, &http.Cookie{
		Name: s.oidcFlightName(), Value: v, Path: "/",
		HttpOnly: true, Secure: s.Secure, SameSite: http.SameSiteLaxMode,
		MaxAge: int(oidcFlightLife / time.Second),
	})
	return f, nil
}

// takeOIDCFlight returns r's flight, if it has a valid one, and clears the
// cookie on w either way: a flight finishes once, so the same callback
// replayed in this browser finds none.
func (s *Sessions) takeOIDCFlight(w http.ResponseWriter, r *http.Request) (oidcFlight, bool) {
	c, err := r.Cookie(s.oidcFlightName())
	if err != nil {
		return oidcFlight{}, false
	}
	http.SetCookie(w, &http.Cookie{Name: s.oidcFlightName(), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.Secure, SameSite: http.SameSiteLaxMode})
	var f oidcFlight
	if err := s.keys.Open(oidcFlightCookie, c.Value, &f); err != nil || f.State == "" || f.Verifier == "" {
		return oidcFlight{}, false
	}
	if age := s.now().Sub(f.IssuedAt); age < 0 || age > oidcFlightLife {
		return oidcFlight{}, false
	}
	return f, true
}

// randomText is n random bytes as URL-safe text.
func randomText(n int) string { return base64.RawURLEncoding.EncodeToString(randomKey(n)) }
