package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// CSRF tokens are HMAC-SHA256, under a key only the server knows, of what the
// request is bound to: the session id (SessionBinding), the proxy-vouched
// identity (ProxyBinding) or, before sign-in, a pre-session (presession.go).
// Nothing a browser holds lets another site compute one, and no cookie is
// compared with a form field: a site that can set cookies for the console's
// host (another port on 127.0.0.1, a sibling subdomain) gains nothing, which
// is where echo's double-submit cookie failed (labstack/echo#2858).

// SessionBinding is what a session's CSRF tokens are bound to.
func SessionBinding(sess Session) string { return "session\x00" + sess.ID }

// ProxyBinding is what CSRF tokens are bound to in proxy mode, which has no
// session: the identity the proxy vouches for on every request.
func ProxyBinding(id kube.Identity) string {
	return "proxy\x00" + id.User + "\x00" + strings.Join(id.Groups, "\x00")
}

// CSRFToken returns the token for binding (URL- and form-safe text), under
// the first key: replicas sharing the keys accept each other's forms.
func (s *Sessions) CSRFToken(binding string) string {
	return csrfToken(s.keys.keys[0].csrf, binding)
}

func csrfToken(key []byte, binding string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("clusterdesk csrf v1\x00" + binding))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// ValidCSRF reports whether token is binding's token under any of the keys
// (a form rendered before a key rotation still posts), each compared in
// constant time.
func (s *Sessions) ValidCSRF(binding, token string) bool {
	if binding == "" || token == "" {
		return false
	}
	ok := false
	for _, k := range s.keys.keys {
		ok = hmac.Equal([]byte(token), []byte(csrfToken(k.csrf, binding))) || ok
	}
	return ok
}
