package pki

import (
	"crypto/x509"
	"testing"
)

// The audit webhook's serving certificate chains to the cluster CA (the API
// server's webhook kubeconfig trusts it for 127.0.0.1), and the API server's
// client certificate chains to the audit client CA only: a certificate the
// cluster CA issues for an approved CSR is no audit webhook client.
func TestAuditWebhookCertificatesChainToTheirCAs(t *testing.T) {
	p, err := Ensure(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pool := func(path string) *x509.CertPool {
		ca, err := ReadCert(path)
		if err != nil {
			t.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AddCert(ca)
		return roots
	}
	serving, err := ReadCert(p.AuditServingCert)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := serving.Verify(x509.VerifyOptions{Roots: pool(p.CACert), DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("audit webhook serving certificate for 127.0.0.1: %v", err)
	}
	client, err := ReadCert(p.AuditClientCert)
	if err != nil {
		t.Fatal(err)
	}
	clientAuth := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if _, err := client.Verify(x509.VerifyOptions{Roots: pool(p.AuditClientCACert), KeyUsages: clientAuth}); err != nil {
		t.Errorf("API server's audit client certificate: %v", err)
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: pool(p.CACert), KeyUsages: clientAuth}); err == nil {
		t.Error("the API server's audit client certificate chains to the cluster CA, want the audit client CA only")
	}
	if client.Subject.CommonName != AuditWebhookClientUser {
		t.Errorf("client certificate names %q, want %q", client.Subject.CommonName, AuditWebhookClientUser)
	}
}
