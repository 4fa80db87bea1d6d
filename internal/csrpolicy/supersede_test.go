package csrpolicy

import (
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// TestDuplicateKey: a kubelet's retries (a new key, other SANs, usages in
// another order) are duplicates; another requester, signer, subject or set
// of usages is not.
func TestDuplicateKey(t *testing.T) {
	base := func() (*certificatesv1.CertificateSigningRequest, *csr.Request) {
		return &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
			Username: "system:node:a", SignerName: certificatesv1.KubeletServingSignerName,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth},
		}}, &csr.Request{CommonName: "system:node:a", Organizations: []string{"system:nodes"}, DNSNames: []string{"a.example"}, PublicKey: "ECDSA P-256"}
	}
	c, r := base()
	key := DuplicateKey(c, r)
	if key == "" {
		t.Fatal("no key")
	}
	retry, rr := base()
	retry.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth, certificatesv1.UsageDigitalSignature}
	rr.DNSNames, rr.PublicKey = []string{"a.example", "10.0.0.1"}, "RSA 2048"
	if DuplicateKey(retry, rr) != key {
		t.Error("a retry with other SANs, another key and usages in another order is not a duplicate")
	}
	for name, change := range map[string]func(*certificatesv1.CertificateSigningRequest, *csr.Request){
		"requester": func(c *certificatesv1.CertificateSigningRequest, _ *csr.Request) { c.Spec.Username = "system:node:b" },
		"signer":    func(c *certificatesv1.CertificateSigningRequest, _ *csr.Request) { c.Spec.SignerName = "example.com/x" },
		"subject":   func(_ *certificatesv1.CertificateSigningRequest, r *csr.Request) { r.CommonName = "system:node:b" },
		"org":       func(_ *certificatesv1.CertificateSigningRequest, r *csr.Request) { r.Organizations = nil },
		"ou": func(_ *certificatesv1.CertificateSigningRequest, r *csr.Request) {
			r.OrganizationalUnit = []string{"x"}
		},
		"usages": func(c *certificatesv1.CertificateSigningRequest, _ *csr.Request) {
			c.Spec.Usages = append(c.Spec.Usages, certificatesv1.UsageKeyEncipherment)
		},
	} {
		c, r := base()
		change(c, r)
		if DuplicateKey(c, r) == key {
			t.Errorf("another %s is a duplicate", name)
		}
	}
	if DuplicateKey(c, nil) != "" {
		t.Error("an undecodable request has a key")
	}
}
