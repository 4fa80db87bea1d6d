package auth

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Browsers keep a cookie's name and value up to 4096 bytes (RFC 6265 §6.1
// asks at least that much; Chromium and Firefox allow no more). A session
// with a devcluster service-account token (992 bytes) seals to 1.9 KB, one
// with an OIDC ID token and refresh token of 1.9 KB to 3.4 KB (measured in
// cookie_size_test.go and the replicas integration test), but ID tokens with
// many groups pass 4 KB. Such a
// session is split over up to maxCookieParts cookies: the first says how
// many parts there are ("3~" before its part), the others are named
// <name>-1, <name>-2, ... Only all parts together open (one authenticated
// JWE), and a session larger than all parts can hold is refused at sign-in
// with ErrSessionTooLarge rather than stored in a cookie a browser drops.
const (
	cookiePartBytes = 3800 // leaves room for the name under 4096
	maxCookieParts  = 4
)

// ErrSessionTooLarge: the sealed session does not fit in maxCookieParts cookies.
var ErrSessionTooLarge = errors.New("the session is too large to keep in the browser's cookies")

// SessionTooLarge tells how large a refused session was.
type SessionTooLarge struct{ Bytes, Limit int }

func (e SessionTooLarge) Error() string {
	return fmt.Sprintf("%s: %d bytes sealed, at most %d fit", ErrSessionTooLarge, e.Bytes, e.Limit)
}

// Is makes errors.Is(err, ErrSessionTooLarge) hold.
func (e SessionTooLarge) Is(target error) bool { return target == ErrSessionTooLarge }

func (s *Sessions) partName(i int) string {
	if i == 0 {
		return s.Name()
	}
	return s.Name() + "-" + strconv.Itoa(i)
}

// setParts writes value as the session cookie, split when it must be, and
// clears parts a larger earlier session left in r.
func (s *Sessions) setParts(w http.ResponseWriter, r *http.Request, value string, maxAge int) error {
	n := (len(value) + cookiePartBytes - 1) / cookiePartBytes
	if n > maxCookieParts {
		return SessionTooLarge{Bytes: len(value), Limit: maxCookieParts * cookiePartBytes}
	}
	if n <= 1 {
		http.SetCookie(w, s.cookie(s.Name(), value, maxAge))
		s.clearPartsFrom(w, r, 1)
		return nil
	}
	for i := range n {
		part := value[i*cookiePartBytes : min(len(value), (i+1)*cookiePartBytes)]
		if i == 0 {
			part = strconv.Itoa(n) + "~" + part
		}
		http.SetCookie(w, s.cookie(s.partName(i), part, maxAge))
	}
	s.clearPartsFrom(w, r, n)
	return nil
}

// parts joins the session cookie's parts in r.
func (s *Sessions) parts(r *http.Request) (string, bool) {
	c, err := r.Cookie(s.Name())
	if err != nil || c.Value == "" {
		return "", false
	}
	n, first, split := strings.Cut(c.Value, "~")
	if !split {
		return c.Value, true
	}
	count, err := strconv.Atoi(n)
	if err != nil || count < 2 || count > maxCookieParts {
		return "", false
	}
	var b strings.Builder
	b.WriteString(first)
	for i := 1; i < count; i++ {
		p, err := r.Cookie(s.partName(i))
		if err != nil {
			return "", false
		}
		b.WriteString(p.Value)
	}
	return b.String(), true
}

// clearPartsFrom expires the parts from index from on that r carries.
func (s *Sessions) clearPartsFrom(w http.ResponseWriter, r *http.Request, from int) {
	if r == nil {
		return
	}
	for i := max(from, 1); i < maxCookieParts; i++ {
		if _, err := r.Cookie(s.partName(i)); err == nil {
			http.SetCookie(w, s.cookie(s.partName(i), "", -1))
		}
	}
}
