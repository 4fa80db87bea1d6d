package testfixtures

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"sync"
	"testing"
)

var (
	keyOnce sync.Once
	key     *ecdsa.PrivateKey
)

// SigningKey is one P-256 key for the whole test binary: signing with it is
// fast (a fuzzer makes thousands of requests a second), and what the tests
// look at is the request's content, not its key.
func SigningKey() *ecdsa.PrivateKey {
	keyOnce.Do(func() {
		var err error
		if key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
	})
	return key
}

// RequestPEM is tmpl signed with signer as a PEM "CERTIFICATE REQUEST", as
// kubectl and kubelets put it in a CSR's spec.request. It fails the test when
// crypto/x509 refuses to make it.
func RequestPEM(t testing.TB, signer any, tmpl *x509.CertificateRequest) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, signer)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// SubjectPEM is a request for the subject CN=cn, O=orgs, signed with SigningKey.
func SubjectPEM(t testing.TB, cn string, orgs ...string) []byte {
	t.Helper()
	return RequestPEM(t, SigningKey(), &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}})
}
