package issue

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// request is a CSR of a custom signer for a fresh key, with usages.
func request(t *testing.T, usages ...certificatesv1.KeyUsage) (*certificatesv1.CertificateSigningRequest, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		SignerName: "example.com/helper-signer", Usages: usages,
		Request: testfixtures.RequestPEM(t, key, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "app"}}),
	}}, key
}

func parse(t *testing.T, pemBytes ...[]byte) []*x509.Certificate {
	t.Helper()
	var all []byte
	for _, p := range pemBytes {
		all = append(all, p...)
	}
	certs, err := ParseCertificates(all, "the certificate", MaxChainCerts, MaxChainBytes)
	if err != nil {
		t.Fatal(err)
	}
	return certs
}

func TestCheck(t *testing.T) {
	now := time.Now()
	ca := testfixtures.NewCA(t, "helper root")
	inter := ca.Intermediate(t, "helper intermediate")
	other := testfixtures.NewCA(t, "unrelated root")
	client := []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature}
	req, key := request(t, client...)
	_, otherKey := request(t)
	good := x509.Certificate{Subject: pkix.Name{CommonName: "app"}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	with := func(f func(*x509.Certificate)) x509.Certificate { c := good; f(&c); return c }
	ten := int32(600)
	short := req.DeepCopy()
	short.Spec.ExpirationSeconds = &ten

	cases := []struct {
		name     string
		req      *certificatesv1.CertificateSigningRequest
		chain    [][]byte
		bundle   []*x509.Certificate
		wantErr  string // "" for accepted
		wantWarn string
	}{
		{name: "matching leaf", req: req, chain: [][]byte{ca.Issue(t, &key.PublicKey, good)}},
		{name: "chain verified against the bundle", req: req, chain: [][]byte{inter.Issue(t, &key.PublicKey, good), inter.PEM}, bundle: []*x509.Certificate{ca.Cert}},
		{name: "another key", req: req, chain: [][]byte{ca.Issue(t, &otherKey.PublicKey, good)}, wantErr: "issued for another key"},
		{name: "leaf not first", req: req, chain: [][]byte{inter.PEM, inter.Issue(t, &key.PublicKey, good)}, wantErr: "Certificate 2 of the upload is the one"},
		{name: "expired", req: req, chain: [][]byte{ca.Issue(t, &key.PublicKey, with(func(c *x509.Certificate) {
			c.NotBefore, c.NotAfter = now.Add(-2*time.Hour), now.Add(-time.Hour)
		}))}, wantErr: "expired at"},
		{name: "not yet valid", req: req, chain: [][]byte{ca.Issue(t, &key.PublicKey, with(func(c *x509.Certificate) {
			c.NotBefore, c.NotAfter = now.Add(time.Hour), now.Add(2*time.Hour)
		}))}, wantErr: "not valid before"},
		{name: "notBefore within the skew", req: req, chain: [][]byte{ca.Issue(t, &key.PublicKey, with(func(c *x509.Certificate) {
			c.NotBefore, c.NotAfter = now.Add(time.Minute), now.Add(time.Hour)
		}))}},
		{name: "outlives expirationSeconds", req: short, chain: [][]byte{ca.Issue(t, &key.PublicKey, good)}, wantWarn: "longer than the 10m0s"},
		{name: "lacks client auth", req: req, chain: [][]byte{ca.Issue(t, &key.PublicKey, with(func(c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		}))}, wantErr: "lacks extended key usages the request asks for: client auth"},
		{name: "lacks digital signature", req: req, chain: [][]byte{ca.Issue(t, &key.PublicKey, with(func(c *x509.Certificate) {
			c.KeyUsage = x509.KeyUsageKeyEncipherment
		}))}, wantErr: "lacks key usages the request asks for: digital signature"},
		{name: "grants more", req: req, chain: [][]byte{ca.Issue(t, &key.PublicKey, with(func(c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}
		}))}, wantWarn: "did not ask for: server auth"},
		{name: "no usage extensions restrict nothing", req: req, chain: [][]byte{ca.Issue(t, &key.PublicKey, with(func(c *x509.Certificate) {
			c.KeyUsage, c.ExtKeyUsage = 0, nil
		}))}},
		{name: "a CA not asked for", req: req, chain: [][]byte{ca.Issue(t, &key.PublicKey, with(func(c *x509.Certificate) {
			c.IsCA, c.BasicConstraintsValid = true, true
		}))}, wantErr: "is a CA certificate"},
		{name: "bundle of another CA", req: req, chain: [][]byte{ca.Issue(t, &key.PublicKey, good)}, bundle: []*x509.Certificate{other.Cert}, wantErr: "does not verify against the CA bundle"},
		{name: "intermediate missing for the bundle", req: req, chain: [][]byte{inter.Issue(t, &key.PublicKey, good)}, bundle: []*x509.Certificate{ca.Cert}, wantErr: "does not verify against the CA bundle"},
		{name: "chain out of order, no bundle", req: req, chain: [][]byte{inter.Issue(t, &key.PublicKey, good), other.PEM}, wantWarn: "did not sign certificate 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			warnings, err := Check(tc.req, parse(t, tc.chain...), tc.bundle, now)
			var invalid *InvalidError
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (!errors.As(err, &invalid) || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want an *InvalidError with %q", err, tc.wantErr)
			}
			got := strings.Join(warnings, "\n")
			if (tc.wantWarn == "") != (got == "") || !strings.Contains(got, tc.wantWarn) {
				t.Errorf("warnings %q, want %q", got, tc.wantWarn)
			}
		})
	}
}

func TestParseCertificatesRefusesWhatIsNotACertificate(t *testing.T) {
	ca := testfixtures.NewCA(t, "root")
	der, err := x509.MarshalECPrivateKey(ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	many := []byte{}
	for range MaxChainCerts + 1 {
		many = append(many, ca.PEM...)
	}
	cases := []struct {
		name, in, want string
	}{
		{"empty", " \n\t", "is empty"},
		{"garbage", "hello, this is not a certificate", "no PEM CERTIFICATE block"},
		{"private key", string(ca.PEM) + string(keyPEM), "holds a private key (block 2, EC PRIVATE KEY)"},
		{"request", string(testfixtures.SubjectPEM(t, "x")), `"CERTIFICATE REQUEST" block`},
		{"broken DER", "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n", "block 1 is not a valid X.509 certificate"},
		{"headers", "-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\n" + strings.Join(strings.Split(string(ca.PEM), "\n")[1:], "\n"), "PEM headers"},
		{"too many", string(many), "more than 10 certificates"},
		{"too large", strings.Repeat("a", MaxChainBytes+1), "at most 65536 are accepted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCertificates([]byte(tc.in), "the certificate", MaxChainCerts, MaxChainBytes)
			var invalid *InvalidError
			if !errors.As(err, &invalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if (len(tc.in) > 20 && strings.Contains(err.Error(), tc.in)) || strings.Contains(err.Error(), string(keyPEM[40:80])) {
				t.Errorf("the error echoes the input: %v", err)
			}
		})
	}
	// Text around the blocks (openssl's subject= lines) is dropped, the blocks kept.
	certs, err := ParseCertificates(append([]byte("subject=CN = root\n"), ca.PEM...), "the certificate", MaxChainCerts, MaxChainBytes)
	if err != nil || len(certs) != 1 || string(EncodeChain(certs)) != string(ca.PEM) {
		t.Fatalf("PEM with text around it: %d certs, %v", len(certs), err)
	}
}
