package csr

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

func TestDecode(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	kubelet := testfixtures.RequestPEM(t, ecKey, &x509.CertificateRequest{
		Subject:     pkix.Name{CommonName: "system:node:worker-1", Organization: []string{"system:nodes"}},
		DNSNames:    []string{"worker-1"},
		IPAddresses: []net.IP{net.ParseIP("10.0.0.7")},
	})
	client := testfixtures.RequestPEM(t, rsaKey, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: "alice", Organization: []string{"dev"}},
	})

	t.Run("ecdsa kubelet serving", func(t *testing.T) {
		r, err := Decode(kubelet)
		if err != nil {
			t.Fatal(err)
		}
		if r.CommonName != "system:node:worker-1" || r.Organizations[0] != "system:nodes" {
			t.Errorf("subject = %q %v", r.CommonName, r.Organizations)
		}
		if r.PublicKey != "ECDSA P-256" || r.DNSNames[0] != "worker-1" || r.IPAddresses[0] != "10.0.0.7" {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("rsa client", func(t *testing.T) {
		r, err := Decode(client)
		if err != nil {
			t.Fatal(err)
		}
		if r.PublicKey != "RSA 2048" || r.SignatureAlgorithm != "SHA256-RSA" {
			t.Errorf("got %+v", r)
		}
	})

	bad := []struct {
		name, in, want string
	}{
		{"not pem", "hello", "not PEM"},
		{"wrong block", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}})), `type "CERTIFICATE"`},
		{"garbage der", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: []byte{1, 2, 3}})), "not a valid PKCS#10"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, err := Decode(nil); !errors.Is(err, ErrNoPEM) {
		t.Errorf("nil input: %v", err)
	}
}
