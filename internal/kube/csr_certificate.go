package kube

import (
	"bytes"
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The CSR cache leaves out issued certificates (issue 27): a cluster holds
// tens of thousands of issued requests, each certificate a kilobyte or more of
// PEM that only its own page shows. The transform keeps in its place what it
// was (size and SHA-256, a non-empty value, so the request still reads as
// issued), and the request's page and its download read the certificate with
// one GET as the user (Lookup.CSR).

// certificateLeftOut is what the cache keeps of every issued certificate: one
// shared value (a certificate, once issued, never changes, so unlike a
// dropped annotation it needs no digest to show a change).
var certificateLeftOut = []byte(StrippedPrefix + "the issued certificate; the request's page reads it from the API server)")

// dropCertificate replaces an issued certificate with what the cache keeps of it.
func dropCertificate(c *certificatesv1.CertificateSigningRequest) {
	if len(c.Status.Certificate) > 0 && !CertificateLeftOut(c) {
		c.Status.Certificate = certificateLeftOut
	}
}

// CertificateLeftOut reports whether c, as the cache holds it, has an issued
// certificate the cache left out: read the request with Lookup.CSR for it.
func CertificateLeftOut(c *certificatesv1.CertificateSigningRequest) bool {
	return bytes.HasPrefix(c.Status.Certificate, []byte(StrippedPrefix))
}

// CSR GETs the CertificateSigningRequest name as the identity: the issued
// certificate the cache leaves out.
func (l *Lookup) CSR(ctx context.Context, name string) (*certificatesv1.CertificateSigningRequest, error) {
	return l.client.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
}

// CSR is Lookup.CSR as the identity in ctx.
func (l UserLookup) CSR(ctx context.Context, name string) (*certificatesv1.CertificateSigningRequest, error) {
	lk, err := l.lookup(ctx)
	if err != nil {
		return nil, err
	}
	return lk.CSR(ctx, name)
}
