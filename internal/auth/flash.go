package auth

import (
	"net/http"
)

// flashCookie carries a one-shot message from a POST to the page it redirects to
// (post/redirect/get), e.g. "Approved" plus the API server's warnings.
const flashCookie = "clusterdesk_flash"

// SetFlash stores v (any JSON value) for the next page view, encrypted and signed
// like the session, so a link cannot plant a fake message.
func (s *Sessions) SetFlash(w http.ResponseWriter, v any) error {
	enc, err := s.keys.Seal(flashCookie, v, false)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: enc, Path: "/", MaxAge: 60,
		HttpOnly: true, Secure: s.Secure, SameSite: http.SameSiteStrictMode})
	return nil
}

// TakeFlash decodes the pending flash into v and clears it. It reports whether there was one.
func (s *Sessions) TakeFlash(w http.ResponseWriter, r *http.Request, v any) bool {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return false
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.Secure, SameSite: http.SameSiteStrictMode})
	return s.keys.Open(flashCookie, c.Value, v) == nil
}
