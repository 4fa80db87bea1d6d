package testfixtures

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// CA is a certificate authority made in a test, as an external CA for a
// custom signer would be: its certificate, its key and its PEM.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	PEM  []byte
}

// NewCA makes a self-signed root CA named cn, valid from an hour ago for a day.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	return newCA(t, cn, nil)
}

// Intermediate makes a CA named cn signed by ca.
func (ca *CA) Intermediate(t testing.TB, cn string) *CA {
	t.Helper()
	return newCA(t, cn, ca)
}

func newCA(t testing.TB, cn string, parent *CA) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	parentCert, parentKey := tmpl, key
	if parent != nil {
		parentCert, parentKey = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parentCert, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Issue signs a certificate for pub from tmpl (its serial number and, when
// zero, validity are filled: from a minute ago for an hour) and returns it
// as PEM.
func (ca *CA) Issue(t testing.TB, pub any, tmpl x509.Certificate) []byte {
	t.Helper()
	tmpl.SerialNumber = serial(t)
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = time.Now().Add(-time.Minute)
	}
	if tmpl.NotAfter.IsZero() {
		tmpl.NotAfter = tmpl.NotBefore.Add(time.Hour)
	}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, ca.Cert, pub, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// RequestKey is the public key of a PEM certificate request (a CSR's
// spec.request), for issuing a certificate that answers it.
func RequestKey(t testing.TB, requestPEM []byte) any {
	t.Helper()
	block, _ := pem.Decode(requestPEM)
	if block == nil {
		t.Fatal("the request is not PEM")
	}
	cr, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cr.PublicKey
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
