package auth

import (
	"crypto/subtle"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
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
	// ErrSecretInClear is ErrUntrusted for a request that carries the right
	// secret over plain HTTP from another host: a proxy configured without TLS
	// (the secret has crossed a network in clear: rotate it), or a replay.
	ErrSecretInClear = fmt.Errorf("%w: the shared secret came over plain HTTP from another host; it is honoured only over TLS or from loopback", ErrUntrusted)
	// ErrNoClientNames: a client-certificate CA without the proxy's names would
	// trust every certificate that CA ever issued, to any service.
	ErrNoClientNames = errors.New("proxy mode with a client-certificate CA needs the proxy certificate's common names")
)

// Proxy takes the user and groups from headers set by an authenticating
// reverse proxy, but only from a request that proves it came through that
// proxy: it carries the shared secret (compared in constant time) over TLS or
// from a loopback peer, or it came over TLS with a client certificate that
// verifies against ClientCAs and names one of ClientNames. The headers of any
// other request are ignored.
type Proxy struct {
	UserHeader   string
	GroupsHeader string
	SecretHeader string
	Secret       []byte         // the shared secret; empty turns this way off
	ClientCAs    *x509.CertPool // CAs of the proxy's client certificate; nil turns this way off
	// ClientNames are the common names a client certificate from ClientCAs
	// must carry: the CA may sign certificates for other services too.
	ClientNames []string
	// UserPrefix and GroupsPrefix go before the user and each group the proxy
	// names, as kube-apiserver's OIDC authenticator prefixes the claims
	// ("oidc:"), so that a person signed in through the proxy is the same
	// Kubernetes user as with a token from the same issuer. As there, the
	// prefix goes before each value as it is, with nothing in between
	// (kubernetes/kubernetes staging/src/k8s.io/apiserver/plugin/pkg/authenticator/token/oidc/oidc.go,
	// claimMappings.username.prefix and groups.prefix).
	UserPrefix, GroupsPrefix string
}

// Check reports whether p has at least one trust setting, and no setting
// that would trust too much.
func (p *Proxy) Check() error {
	if len(p.Secret) == 0 && p.ClientCAs == nil {
		return ErrNoTrust
	}
	if p.ClientCAs != nil && len(p.ClientNames) == 0 {
		return ErrNoClientNames
	}
	if p.UserHeader == "" {
		return errors.New("proxy mode needs the user header's name")
	}
	if err := CheckPrefix("the user prefix", p.UserPrefix); err != nil {
		return err
	}
	return CheckPrefix("the groups prefix", p.GroupsPrefix)
}

// Trusted reports whether r came through the proxy.
func (p *Proxy) Trusted(r *http.Request) bool {
	if privateChannel(r) && p.secretMatches(r) {
		return true
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
		// As kube-apiserver's --requestheader-allowed-names, but required: the
		// common name of the verified leaf must be one of the proxy's
		// (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go,
		// Verifier.verifySubject): exact match, no case folding.
		return err == nil && slices.Contains(p.ClientNames, leaf.Subject.CommonName)
	}
	return false
}

// secretMatches reports whether r carries the shared secret (constant time).
func (p *Proxy) secretMatches(r *http.Request) bool {
	got := r.Header.Get(p.SecretHeader)
	return len(p.Secret) > 0 && got != "" && subtle.ConstantTimeCompare([]byte(got), p.Secret) == 1
}

// privateChannel reports whether a shared secret in r's headers could not have
// been read on the way: r came over TLS, or from a loopback peer (a proxy in
// the same pod or on the same host). Over plain HTTP from anywhere else the
// secret crossed a network in clear, so whoever sent it proves nothing.
// RemoteAddr is the TCP peer; nothing in the request's headers can change it.
func privateChannel(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckListener refuses a shared secret on a listener that can only take
// requests over plain HTTP from other hosts: addr is the listener's address,
// tls whether it serves TLS. A loopback or wildcard address is fine (the
// secret is then honoured only from loopback peers, see privateChannel).
func (p *Proxy) CheckListener(addr net.Addr, tls bool) error {
	tcp, ok := addr.(*net.TCPAddr)
	// No IP (":8080" resolved, not listened on) means all addresses too.
	if len(p.Secret) == 0 || tls || !ok || len(tcp.IP) == 0 || tcp.IP.IsLoopback() || tcp.IP.IsUnspecified() {
		return nil
	}
	return fmt.Errorf("the proxy's shared secret would reach %s only over plain HTTP from other hosts, in clear: "+
		"serve TLS (--tls-cert, --tls-key), or listen on loopback (or all addresses) with the proxy on the same host or pod", addr)
}

// Identify returns the identity the proxy names for r, to be impersonated. A
// user or group in Kubernetes' system: names is a *ReservedNameError.
func (p *Proxy) Identify(r *http.Request) (kube.Identity, error) {
	if !p.Trusted(r) {
		if p.secretMatches(r) && !privateChannel(r) {
			return kube.Identity{}, ErrSecretInClear
		}
		return kube.Identity{}, ErrUntrusted
	}
	user := strings.TrimSpace(r.Header.Get(p.UserHeader))
	if user == "" {
		return kube.Identity{}, ErrNoProxyUser
	}
	user = p.UserPrefix + user
	// A system: name would be impersonated as Kubernetes' own (system:admin,
	// system:masters): refused, the whole request (proxy_names.go).
	if reserved(user) {
		return kube.Identity{}, &ReservedNameError{Kind: "user", Name: user, Header: p.UserHeader, Value: r.Header.Get(p.UserHeader)}
	}
	var groups []string
	if p.GroupsHeader != "" {
		var err error
		if groups, err = groupsFrom(r, p.GroupsHeader, p.GroupsPrefix); err != nil {
			return kube.Identity{}, err
		}
	}
	return kube.Identity{User: user, Groups: groups, Act: kube.ActImpersonating}, nil
}
