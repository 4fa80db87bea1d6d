package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// writeCert writes a self-signed certificate and its key as PEM files.
func writeCert(t *testing.T, dir string) (certFile, keyFile string) {
	certFile, keyFile, _, _ = writeCA(t, dir)
	return certFile, keyFile
}

// writeCA is writeCert that also returns the certificate and key, to sign others.
func writeCA(t *testing.T, dir string) (certFile, keyFile string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "clusterdesk"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	ca, err = x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, ca, key
}

// clientCert is a TLS client certificate signed by ca.
func clientCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey) tls.Certificate {
	t.Helper()
	return clientCertNamed(t, ca, caKey, "oauth2-proxy")
}

// clientCertNamed is clientCert with the common name cn.
func clientCertNamed(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// Proxy mode with --proxy-client-ca over real TLS: only a request whose client
// certificate the CA signed is taken at its headers' word.
func TestProxyClientCertificateOverTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key, ca, caKey := writeCA(t, dir)
	si, err := buildSignIn(signInConfig{mode: "proxy", proxyUserHeader: auth.DefaultProxyUserHeader,
		proxyGroupsHeader: auth.DefaultProxyGroupsHeader, proxySecretHeader: auth.DefaultProxySecretHeader,
		proxyClientCA: cert, proxyClientCN: "oauth2-proxy", tlsCert: cert, tlsKey: key}, &rest.Config{Host: "https://127.0.0.1:1"}, nil, "admin")
	if err != nil {
		t.Fatal(err)
	}
	ln, baseURL, err := si.listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := si.gate.Identify(w, r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, id.User, " ", strings.Join(id.Groups, ","), " ", id.Act)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	roots := x509.NewCertPool()
	roots.AddCert(ca)
	_, _, otherCA, otherKey := writeCA(t, t.TempDir())
	get := func(certs ...tls.Certificate) (int, string) {
		t.Helper()
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
		req, _ := http.NewRequest(http.MethodGet, baseURL+"/", nil)
		req.Header.Set("X-Forwarded-User", "alice")
		req.Header.Set("X-Forwarded-Groups", "team-a")
		res, err := c.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get(clientCert(t, ca, caKey)); code != http.StatusOK || body != "alice team-a impersonate" {
		t.Errorf("with the proxy's certificate: %d %q", code, body)
	}
	if code, body := get(); code != http.StatusUnauthorized {
		t.Errorf("without a client certificate: %d %q", code, body)
	}
	if code, body := get(clientCert(t, otherCA, otherKey)); code == http.StatusOK {
		t.Errorf("with a certificate from another CA: %d %q", code, body)
	}
	// The attack the pin stops: a certificate the same CA issued to another
	// service (here minted with the CA's key) is not the proxy's.
	for _, cn := range []string{"metrics-scraper", "oauth2-proxy.evil", "Oauth2-Proxy"} {
		if code, body := get(clientCertNamed(t, ca, caKey, cn)); code != http.StatusUnauthorized {
			t.Errorf("with a certificate from the proxy's CA for %q: %d %q", cn, code, body)
		}
	}
}

func TestBuildSignIn(t *testing.T) {
	t.Setenv("CLUSTERDESK_PROXY_SECRET", "")
	dir := t.TempDir()
	cert, key := writeCert(t, dir)
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("a-shared-secret-of-32-bytes-long\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	restCfg := &rest.Config{Host: "https://127.0.0.1:1"}
	base := signInConfig{proxyUserHeader: auth.DefaultProxyUserHeader, proxyGroupsHeader: auth.DefaultProxyGroupsHeader, proxySecretHeader: auth.DefaultProxySecretHeader}
	with := func(f func(*signInConfig)) signInConfig { c := base; f(&c); return c }

	for _, c := range []signInConfig{with(func(c *signInConfig) { c.mode = "oidc" }), with(func(c *signInConfig) { c.mode = "proxy" })} {
		if err := c.precheck(); err == nil {
			t.Errorf("precheck accepted --auth %s without trust", c.mode)
		}
	}
	if err := with(func(c *signInConfig) { c.mode = "proxy"; c.proxySecretFile = secret }).precheck(); err != nil {
		t.Errorf("precheck refused proxy mode with a secret: %v", err)
	}
	for _, tc := range []struct {
		name    string
		cfg     signInConfig
		wantErr string
	}{
		{"unknown mode", with(func(c *signInConfig) { c.mode = "saml" }), "unknown sign-in mode"},
		{"proxy without trust", with(func(c *signInConfig) { c.mode = "proxy" }), "trust setting"},
		{"proxy with a short secret", with(func(c *signInConfig) { c.mode = "proxy"; c.proxySecretFile = short }), "at least 16 bytes"},
		{"client CA without TLS", with(func(c *signInConfig) { c.mode = "proxy"; c.proxyClientCA = cert }), "needs --tls-cert"},
		{"client CA without the proxy's name", with(func(c *signInConfig) {
			c.mode = "proxy"
			c.proxyClientCA, c.tlsCert, c.tlsKey = cert, cert, key
		}), "needs --proxy-client-cn"},
		{"client CA with only blank names", with(func(c *signInConfig) {
			c.mode = "proxy"
			c.proxyClientCA, c.proxyClientCN, c.tlsCert, c.tlsKey = cert, " , ", cert, key
		}), "needs --proxy-client-cn"},
		{"cert without key", with(func(c *signInConfig) { c.mode = "local"; c.tlsCert = cert }), "go together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := buildSignIn(tc.cfg, restCfg, nil, "admin"); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
			}
		})
	}

	si, err := buildSignIn(with(func(c *signInConfig) { c.mode = "proxy"; c.proxySecretFile = secret }), restCfg, nil, "admin")
	if err != nil || si.gate.Proxy == nil || string(si.gate.Proxy.Secret) != "a-shared-secret-of-32-bytes-long" || !si.users.Strict {
		t.Fatalf("proxy with secret: %+v, %v", si, err)
	}
	si, err = buildSignIn(with(func(c *signInConfig) {
		c.mode = "proxy"
		c.proxyClientCA, c.proxyClientCN, c.tlsCert, c.tlsKey = cert, "oauth2-proxy, oauth2-proxy-next", cert, key
	}), restCfg, nil, "admin")
	if err == nil && !slices.Equal(si.gate.Proxy.ClientNames, []string{"oauth2-proxy", "oauth2-proxy-next"}) {
		t.Errorf("--proxy-client-cn read as %q", si.gate.Proxy.ClientNames)
	}
	if err != nil || si.tls == nil || si.tls.ClientCAs == nil || si.gate.Proxy.ClientCAs == nil || !si.sessions.Secure {
		t.Fatalf("proxy with client CA over TLS: %v", err)
	}
	ln, url, err := si.listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if !strings.HasPrefix(url, "https://") {
		t.Errorf("TLS listener URL %q", url)
	}
	si, err = buildSignIn(with(func(c *signInConfig) { c.mode = "token" }), restCfg, nil, "admin")
	if err != nil || si.gate.Mode != auth.ModeToken || si.review == nil || !si.users.Strict || si.sessions.Secure {
		t.Fatalf("token mode: %v", err)
	}
	si, err = buildSignIn(with(func(c *signInConfig) { c.mode = "local" }), restCfg, nil, "admin")
	if err != nil || si.users.Strict {
		t.Fatalf("local mode: %v", err)
	}
}

// A proxy prefix in system: (or the start of it) would make every name the
// proxy sends one of Kubernetes' own: the console refuses to start with it,
// saying which flag.
func TestProxyPrefixInSystemRefusedAtStart(t *testing.T) {
	t.Setenv("CLUSTERDESK_PROXY_SECRET", "")
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("a-shared-secret-of-32-bytes-long\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	restCfg := &rest.Config{Host: "https://127.0.0.1:1"}
	for _, tc := range []struct {
		user, groups string
		wantErr      string // "" for none
	}{
		{"", "", ""},
		{"oidc:", "oidc:", ""},
		{"system:", "oidc:", "--proxy-user-prefix"},
		{"oidc:", "system:oidc:", "--proxy-groups-prefix"},
		{"", "system", "--proxy-groups-prefix"},
	} {
		t.Run(tc.user+"|"+tc.groups, func(t *testing.T) {
			c := signInConfig{mode: "proxy", proxySecretFile: secret, proxyUserHeader: auth.DefaultProxyUserHeader,
				proxyGroupsHeader: auth.DefaultProxyGroupsHeader, proxySecretHeader: auth.DefaultProxySecretHeader,
				proxyUserPrefix: tc.user, proxyGroupsPrefix: tc.groups}
			errPre := c.precheck()
			_, errBuild := buildSignIn(c, restCfg, nil, "admin")
			for _, err := range []error{errPre, errBuild} {
				if tc.wantErr == "" && err != nil {
					t.Fatalf("refused: %v", err)
				}
				if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), `"system:"`)) {
					t.Fatalf("err = %v, want one naming %s and system:", err, tc.wantErr)
				}
			}
		})
	}
}

// --session-keys: replicas in token mode share keys and sign-outs (a
// namespace for the Leases is needed); proxy mode shares keys for its forms;
// local mode, one process by design, refuses it.
func TestBuildSignInWithSessionKeys(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if err := os.WriteFile(keys, []byte("# newest first\nMDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	weak := filepath.Join(dir, "weak")
	if err := os.WriteFile(weak, []byte("c2hvcnQ=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	restCfg := &rest.Config{Host: "https://127.0.0.1:1"}
	if err := (signInConfig{mode: "local", sessionKeys: keys}).precheck(); err == nil {
		t.Error("local mode accepted --session-keys")
	}
	if _, err := buildSignIn(signInConfig{mode: "token", sessionKeys: weak, namespace: "clusterdesk"}, restCfg, nil, "admin"); err == nil || !strings.Contains(err.Error(), "--session-keys") {
		t.Errorf("a 5-byte key: %v", err)
	}
	podNamespace = func(string) string { return "" } // as outside a pod
	t.Cleanup(func() { podNamespace = readPodNamespace })
	if _, err := buildSignIn(signInConfig{mode: "token", sessionKeys: keys}, restCfg, nil, "admin"); err == nil || !strings.Contains(err.Error(), "--namespace") {
		t.Errorf("token mode with keys but no namespace: %v", err)
	}
	// In a pod: the namespace file beside the token --in-cluster-dir names.
	podNamespace = readPodNamespace
	saDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(saDir, "namespace"), []byte("from-the-pod\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if si, err := buildSignIn(signInConfig{mode: "token", sessionKeys: keys, inClusterDir: saDir}, restCfg, nil, "admin"); err != nil || si.revocations.Namespace() != "from-the-pod" {
		t.Errorf("token mode with keys in a pod whose --in-cluster-dir says from-the-pod: %v", err)
	}
	si, err := buildSignIn(signInConfig{mode: "token", sessionKeys: keys, namespace: "clusterdesk"}, restCfg, nil, "admin")
	if err != nil || si.revoker == nil || si.sessions.Revocations != si.revoker || si.revocations.Namespace() != "clusterdesk" {
		t.Fatalf("token mode with keys: %v", err)
	}
	other, err := buildSignIn(signInConfig{mode: "token", sessionKeys: keys, namespace: "clusterdesk"}, restCfg, nil, "admin")
	if err != nil {
		t.Fatal(err)
	}
	if tok := si.sessions.CSRFToken("session\x00x"); !other.sessions.ValidCSRF("session\x00x", tok) {
		t.Error("two replicas with the same key file refuse each other's forms")
	}
	if si, err := buildSignIn(signInConfig{mode: "token"}, restCfg, nil, "admin"); err != nil || si.revoker != nil {
		t.Errorf("token mode without keys should keep sign-outs in memory: %v", err)
	}
}

// The shared secret never has to cross a network in clear: a plain-HTTP
// listener only other hosts can reach is refused at start; loopback, all
// addresses (then only loopback peers may present it) and TLS are served.
func TestProxySecretListener(t *testing.T) {
	t.Setenv("CLUSTERDESK_PROXY_SECRET", "")
	dir := t.TempDir()
	cert, key := writeCert(t, dir)
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("a-shared-secret-of-32-bytes-long\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	build := func(tlsOn bool) *signIn {
		t.Helper()
		c := signInConfig{mode: "proxy", proxyUserHeader: auth.DefaultProxyUserHeader, proxySecretHeader: auth.DefaultProxySecretHeader, proxySecretFile: secret}
		if tlsOn {
			c.tlsCert, c.tlsKey = cert, key
		}
		si, err := buildSignIn(c, &rest.Config{Host: "https://127.0.0.1:1"}, nil, "admin")
		if err != nil {
			t.Fatal(err)
		}
		return si
	}
	external := testcluster.NonLoopbackAddress(t)
	for _, tc := range []struct {
		addr string
		tls  bool
		ok   bool
	}{
		{"127.0.0.1:0", false, true},
		{"0.0.0.0:0", false, true},
		{external + ":0", false, false},
		{external + ":0", true, true},
	} {
		ln, _, err := build(tc.tls).listen(tc.addr)
		if ln != nil {
			ln.Close()
		}
		if (err == nil) != tc.ok {
			t.Errorf("listen %s (TLS %v): %v, want ok=%v", tc.addr, tc.tls, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "in clear") {
			t.Errorf("listen %s: the error does not say why: %v", tc.addr, err)
		}
	}

	// Over a real socket, on all addresses: the secret works from loopback,
	// and the same request from another address of this host is refused.
	si := build(false)
	ln, baseURL, err := si.listen("0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := si.gate.Identify(w, r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, id.User)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	get := func(host string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://%s/", net.JoinHostPort(host, fmt.Sprint(port))), nil)
		req.Header.Set(auth.DefaultProxySecretHeader, "a-shared-secret-of-32-bytes-long")
		req.Header.Set(auth.DefaultProxyUserHeader, "bob")
		// Dial from the same address family's matching local address, so
		// that the console's peer is what the host name says.
		d := &net.Dialer{}
		if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() {
			d.LocalAddr = &net.TCPAddr{IP: ip}
		}
		res, err := (&http.Client{Transport: &http.Transport{DialContext: d.DialContext}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("127.0.0.1"); code != http.StatusOK || body != "bob" {
		t.Errorf("from loopback: %d %q (base %s)", code, body, baseURL)
	}
	if code, body := get(external); code != http.StatusUnauthorized || !strings.Contains(body, "plain HTTP") {
		t.Errorf("from %s: %d %q", external, code, body)
	}
}
