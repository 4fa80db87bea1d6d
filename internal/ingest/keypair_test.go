package ingest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// A renewed serving pair is served from the next handshake on, with no
// restart; a half-written renewal (the certificate changed, its key not yet)
// leaves the last good pair in service instead of failing handshakes.
func TestWebhookServesARenewedCertificateWithoutRestart(t *testing.T) {
	ca := testfixtures.NewCA(t, "audit webhook test CA")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	issue := func() (certPEM, keyPEM []byte, serial *big.Int) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		certPEM = ca.Issue(t, &key.PublicKey, x509.Certificate{Subject: pkix.Name{CommonName: "webhook"},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			KeyUsage: x509.KeyUsageDigitalSignature})
		der, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(certPEM)
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), cert.SerialNumber
	}
	write := func(path string, b []byte) {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	certA, keyA, serialA := issue()
	write(certFile, certA)
	write(keyFile, keyA)

	rc, err := NewReceiver(Options{Store: newMemStore(), Senders: Senders{Token: strings.Repeat("t", 32)}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Listen("127.0.0.1:0", certFile, keyFile, rc, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	served := func() *big.Int {
		t.Helper()
		conn, err := tls.Dial("tcp", srv.Addr(), &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
		if err != nil {
			t.Fatalf("handshake: %v", err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber
	}
	if got := served(); got.Cmp(serialA) != 0 {
		t.Fatalf("serves serial %x, want the first pair's %x", got, serialA)
	}

	certB, keyB, serialB := issue()
	write(certFile, certB)
	write(keyFile, keyB)
	if got := served(); got.Cmp(serialB) != 0 {
		t.Fatalf("after the renewal: serves serial %x, want the renewed %x", got, serialB)
	}

	// Half-way through the next renewal: the certificate is new, the key
	// still the old one.
	certC, keyC, serialC := issue()
	write(certFile, certC)
	if got := served(); got.Cmp(serialB) != 0 {
		t.Fatalf("with a certificate and a key that do not match: serves serial %x, want the last good %x", got, serialB)
	}
	write(keyFile, keyC)
	if got := served(); got.Cmp(serialC) != 0 {
		t.Fatalf("once the key followed: serves serial %x, want %x", got, serialC)
	}
}
