package fleet

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// terminator is the TLS that HAProxy terminates in front of the consoles when
// Options.TLS is set: a self-signed certificate for 127.0.0.1 and localhost,
// made per fleet, as an Ingress with its own certificate terminates TLS and
// speaks plain HTTP to the pods.
type terminator struct {
	pemPath string         // certificate then key, the form HAProxy's "crt" reads
	roots   *x509.CertPool // trusts the certificate, for test clients
}

// newTerminator writes the balancer's certificate and key into dir.
func newTerminator(dir string) (*terminator, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "clusterdesk fleet balancer"},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:    []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	out := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	out = append(out, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})...)
	path := filepath.Join(dir, "balancer.pem")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return nil, fmt.Errorf("fleet: write the balancer's certificate: %w", err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return &terminator{pemPath: path, roots: roots}, nil
}

// Transport is an HTTP transport for the balancer: it trusts the balancer's
// certificate with Options.TLS, and dials from local (a loopback address such
// as 127.0.0.7; "" for the default), so that tests can be several clients
// with addresses of their own behind one balancer.
func (f *Fleet) Transport(local string) *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	t := &http.Transport{DialContext: d.DialContext, ForceAttemptHTTP2: false, MaxIdleConnsPerHost: 64}
	if f.tls != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: f.tls.roots, MinVersion: tls.VersionTLS12}
	}
	return t
}
