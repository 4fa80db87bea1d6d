package auth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

const testProxySecret = "0123456789abcdef-secret"

func proxyRequest(remote string, tlsState *tls.ConnectionState) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = remote
	r.TLS = tlsState
	r.Header.Set("X-Forwarded-User", "bob")
	r.Header.Set("X-Forwarded-Groups", "clusterdesk-approvers,team-b")
	r.Header.Set("X-Proxy-Secret", testProxySecret)
	return r
}

// The shared secret proves the proxy only where nobody on the way could have
// read it: over TLS, or from a loopback peer. Over plain HTTP from another
// host it is refused, with an error that says why.
func TestProxySecretOnlyOverTLSOrLoopback(t *testing.T) {
	p := &Proxy{UserHeader: "X-Forwarded-User", GroupsHeader: "X-Forwarded-Groups", SecretHeader: "X-Proxy-Secret",
		Secret: []byte(testProxySecret)}
	for _, tc := range []struct {
		name   string
		remote string
		tls    bool
		want   error // nil: trusted
	}{
		{"IPv4 loopback", "127.0.0.1:40000", false, nil},
		{"another IPv4 loopback address", "127.8.9.10:40000", false, nil},
		{"IPv6 loopback", "[::1]:40000", false, nil},
		{"IPv4-mapped loopback", "[::ffff:127.0.0.1]:40000", false, nil},
		{"pod network, plain HTTP", "10.244.1.7:40000", false, ErrSecretInClear},
		{"IPv6 host, plain HTTP", "[2001:db8::7]:40000", false, ErrSecretInClear},
		{"pod network over TLS", "10.244.1.7:40000", true, nil},
		{"no port", "127.0.0.1", false, ErrSecretInClear},
		{"a name, not an address", "localhost:40000", false, ErrSecretInClear},
		{"empty", "", false, ErrSecretInClear},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var state *tls.ConnectionState
			if tc.tls {
				state = &tls.ConnectionState{}
			}
			id, err := p.Identify(proxyRequest(tc.remote, state))
			if tc.want != nil {
				if !errors.Is(err, tc.want) || !errors.Is(err, ErrUntrusted) || id.User != "" {
					t.Fatalf("Identify = %+v, %v; want %v", id, err, tc.want)
				}
				return
			}
			if err != nil || id.User != "bob" {
				t.Fatalf("Identify = %+v, %v", id, err)
			}
		})
	}
	// A wrong secret from another host is plainly untrusted, not "in clear":
	// the message must not tell a stranger that a guess was right.
	r := proxyRequest("10.244.1.7:40000", nil)
	r.Header.Set("X-Proxy-Secret", "0123456789abcdef-secreT")
	if _, err := p.Identify(r); !errors.Is(err, ErrUntrusted) || errors.Is(err, ErrSecretInClear) {
		t.Fatalf("wrong secret from another host: %v", err)
	}
}

// A listener that can take requests only from other hosts over plain HTTP is
// refused when there is a secret: no request could ever present it safely.
func TestProxyCheckListener(t *testing.T) {
	withSecret := &Proxy{Secret: []byte(testProxySecret)}
	certOnly := &Proxy{ClientCAs: x509.NewCertPool(), ClientNames: []string{"oauth2-proxy"}}
	tcp := func(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 8080} }
	for _, tc := range []struct {
		name string
		p    *Proxy
		addr net.Addr
		tls  bool
		ok   bool
	}{
		{"loopback, plain HTTP", withSecret, tcp("127.0.0.1"), false, true},
		{"IPv6 loopback, plain HTTP", withSecret, tcp("::1"), false, true},
		{"all addresses, plain HTTP (loopback peers only)", withSecret, tcp("0.0.0.0"), false, true},
		{"all IPv6 addresses, plain HTTP", withSecret, tcp("::"), false, true},
		{"no address (\":8080\"), plain HTTP", withSecret, &net.TCPAddr{Port: 8080}, false, true},
		{"pod address, plain HTTP", withSecret, tcp("10.244.1.7"), false, false},
		{"public IPv6 address, plain HTTP", withSecret, tcp("2001:db8::7"), false, false},
		{"pod address over TLS", withSecret, tcp("10.244.1.7"), true, true},
		{"pod address, no secret", certOnly, tcp("10.244.1.7"), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.p.CheckListener(tc.addr, tc.tls); (err == nil) != tc.ok {
				t.Fatalf("CheckListener(%v, tls=%v) = %v, want ok=%v", tc.addr, tc.tls, err, tc.ok)
			}
		})
	}
}

// A CA may sign certificates for many services: only the proxy's common names
// are trusted, and a CA without names is refused at start.
func TestProxyClientCertificateNamePinned(t *testing.T) {
	caCert, caKey := newCA(t, "proxy CA")
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	if err := (&Proxy{UserHeader: "X-Forwarded-User", ClientCAs: pool}).Check(); !errors.Is(err, ErrNoClientNames) {
		t.Fatalf("a CA without names: %v", err)
	}
	p := &Proxy{UserHeader: "X-Forwarded-User", ClientCAs: pool, ClientNames: []string{"oauth2-proxy", "oauth2-proxy-next"}}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cn    string
		trust bool
	}{
		{"oauth2-proxy", true},
		{"oauth2-proxy-next", true},
		{"metrics-scraper", false},
		{"OAUTH2-PROXY", false},
		{"oauth2-proxy ", false},
		{"", false},
	} {
		t.Run(tc.cn, func(t *testing.T) {
			r := proxyRequest("10.244.1.7:40000", &tls.ConnectionState{
				PeerCertificates: []*x509.Certificate{leafNamed(t, caCert, caKey, x509.ExtKeyUsageClientAuth, tc.cn)}})
			r.Header.Del("X-Proxy-Secret")
			if got := p.Trusted(r); got != tc.trust {
				t.Fatalf("certificate for %q trusted = %v", tc.cn, got)
			}
		})
	}
}

// The prefixes make the proxy's names the API server's: "bob" in
// "clusterdesk-approvers" is impersonated as oidc:bob in oidc:clusterdesk-approvers.
func TestProxyPrefixes(t *testing.T) {
	p := &Proxy{UserHeader: "X-Forwarded-User", GroupsHeader: "X-Forwarded-Groups", SecretHeader: "X-Proxy-Secret",
		Secret: []byte(testProxySecret), UserPrefix: "oidc:", GroupsPrefix: "oidc:"}
	r := proxyRequest("127.0.0.1:40000", nil)
	r.Header.Add("X-Forwarded-Groups", " ops ,")
	id, err := p.Identify(r)
	if err != nil || id.User != "oidc:bob" || !slices.Equal(id.Groups, []string{"oidc:clusterdesk-approvers", "oidc:team-b", "oidc:ops"}) {
		t.Fatalf("Identify = %+v, %v", id, err)
	}
	p.UserPrefix, p.GroupsPrefix = "", ""
	if id, err = p.Identify(r); err != nil || id.User != "bob" || id.Groups[0] != "clusterdesk-approvers" {
		t.Fatalf("without prefixes: %+v, %v", id, err)
	}
}
