package auth

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"
)

// flashCookie carries a one-shot message from a POST to the page it redirects to
// (post/redirect/get), e.g. "Approved" plus the API server's warnings;
// secureFlashCookie replaces it when Secure is set, like the session's name.
const (
	flashCookie       = "clusterdesk_flash"
	secureFlashCookie = "__Host-clusterdesk_flash"
	// flashPurpose seals bound flashes: a flash sealed before they were bound
	// (purpose flashCookie, no binding, no expiry) does not open as one.
	flashPurpose = "clusterdesk_flash/bound"
	// FlashLife is how long a flash may wait for the page it was set for:
	// the redirect follows at once, so a minute is plenty.
	FlashLife = time.Minute
)

// boundFlash is the sealed flash: the message, a digest of what the request
// was bound to when it was set (the session id, or proxy mode's identity:
// the CSRF binding), and when it stops being shown. The cookie's Max-Age is
// the browser's promise only; Expires inside the seal is the server's, and
// Binding keeps a flash copied from one session from showing in another.
type boundFlash struct {
	Binding string          `json:"b"`
	Expires time.Time       `json:"x"`
	Value   json.RawMessage `json:"v"`
}

func (s *Sessions) flashName() string {
	if s.Secure {
		return secureFlashCookie
	}
	return flashCookie
}

// flashBinding is a digest of binding: the flash need not carry the
// identity itself (proxy mode's lists every group), only be tied to it.
func flashBinding(binding string) string {
	sum := sha256.Sum256([]byte("clusterdesk flash\x00" + binding))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// SetFlash stores v (any JSON value) for the next page view of the same
// binding (SessionBinding, ProxyBinding), encrypted and signed like the
// session, so a link cannot plant a fake message, and for FlashLife at most.
// Without a binding nothing is stored: a flash no one can take is not worth
// a cookie.
func (s *Sessions) SetFlash(w http.ResponseWriter, binding string, v any) error {
	if binding == "" {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	enc, err := s.keys.Seal(flashPurpose, boundFlash{Binding: flashBinding(binding), Expires: s.now().Add(FlashLife), Value: raw}, false)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: s.flashName(), Value: enc, Path: "/", MaxAge: int(FlashLife / time.Second),
		HttpOnly: true, Secure: s.Secure, SameSite: http.SameSiteStrictMode})
	return nil
}

// TakeFlash decodes the pending flash into v and clears it. It reports
// whether there was one set for binding that has not expired.
func (s *Sessions) TakeFlash(w http.ResponseWriter, r *http.Request, binding string, v any) bool {
	c, err := r.Cookie(s.flashName())
	if err != nil {
		return false
	}
	http.SetCookie(w, &http.Cookie{Name: s.flashName(), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.Secure, SameSite: http.SameSiteStrictMode})
	var f boundFlash
	if binding == "" || s.keys.Open(flashPurpose, c.Value, &f) != nil {
		return false
	}
	if f.Binding != flashBinding(binding) || !s.now().Before(f.Expires) {
		return false
	}
	return json.Unmarshal(f.Value, v) == nil
}
