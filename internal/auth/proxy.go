package auth

import (
	"crypto/subtle"
	"crypto/x509"
	"errors"
	"net/http"
	"strings"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Default header names of proxy mode (oauth2-proxy's).
const (
	DefaultProxyUserHeader   = "X-Forwarded-User"
	DefaultProxyGroupsHeader = "X-Forwarded-Groups"
	DefaultProxySecretHeader = "X-Clusterdesk-Proxy-Secret"
)

// Errors of proxy mode.
var (
	ErrUntrusted   = errors.New("the request did not come through the trusted proxy")
	ErrNoProxyUser = errors.New("the trusted proxy named no user")
	ErrNoTrust     = errors.New("proxy mode needs a trust setting: a shared secret or a client-certificate CA")
)

// Proxy takes the user and groups from headers set by an authenticating
// reverse proxy, but only from a request that proves it came through that
// proxy: it carries the shared secret (compared in constant time) or it came
// over TLS with a client certificate that verifies against ClientCAs. The
// headers of any other request are ignored.
type Proxy struct {
	UserHeader   string
	GroupsHeader string
	SecretHeader string
	Secret       []byte         // the shared secret; empty turns this way off
	ClientCAs    *x509.CertPool // CAs of the proxy's client certificate; nil turns this way off
}

// Check reports whether p has at least one trust setting.
func (p *Proxy) Check() error {
	if len(p.Secret) == 0 && p.ClientCAs == nil {
		return ErrNoTrust
	}
	if p.UserHeader == "" {
		return errors.New("proxy mode needs the user header's name")
	}
	return nil
}

// Trusted reports whether r came through the proxy.
func (p *Proxy) Trusted(r *http.Request) bool {
	if len(p.Secret) > 0 {
		got := r.Header.Get(p.SecretHeader)
		if got != "" && subtle.ConstantTimeCompare([]byte(got), p.Secret) == 1 {
			return true
		}
	}
	if p.ClientCAs != nil && r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		leaf := r.TLS.PeerCertificates[0]
		inter := x509.NewCertPool()
		for _, c := range r.TLS.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := leaf.Verify(x509.VerifyOptions{
			Roots: p.ClientCAs, Intermediates: inter,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		})
		return err == nil
	}
	return false
}

// Identify returns the identity the proxy names for r, to be impersonated.
func (p *Proxy) Identify(r *http.Request) (kube.Identity, error) {
	if !p.Trusted(r) {
		return kube.Identity{}, ErrUntrusted
	}
	user := strings.TrimSpace(r.Header.Get(p.UserHeader))
	if user == "" {
		return kube.Identity{}, ErrNoProxyUser
	}
	var groups []string
	if p.GroupsHeader != "" {
		for _, v := range r.Header.Values(p.GroupsHeader) {
			for _, g := range strings.Split(v, ",") {
				if g = strings.TrimSpace(g); g != "" {
					groups = append(groups, g)
				}
			}
		}
	}
	return kube.Identity{User: user, Groups: groups, Act: kube.ActImpersonating}, nil
}
