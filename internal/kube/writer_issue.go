package kube

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReadCSR reads the CSR name from the API server (not the cache) as the
// writer's identity: what a write is about to act on.
func (w *Writer) ReadCSR(ctx context.Context, name string) (*certificatesv1.CertificateSigningRequest, error) {
	return w.client.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
}

// WriteCSRCertificate sends csr, whose status.certificate the caller has
// set, through the /status subresource. Its UID and resourceVersion are the
// write's preconditions: the API server answers 409 Conflict when the object
// under the name is another one or has changed (upstream
// staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go,
// Store.Update). Besides update on certificatesigningrequests/status, the
// API server's CertificateSigning admission plugin requires the verb sign on
// signers/<signerName> (or <domain>/*) when status.certificate changes
// (upstream plugin/pkg/admission/certificates/signing/admission.go); a user
// without it gets its 403. It is never retried. It returns the API server's
// warnings, also on error.
func (w *Writer) WriteCSRCertificate(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) (*certificatesv1.CertificateSigningRequest, []string, error) {
	if csr.UID == "" || csr.ResourceVersion == "" {
		return nil, nil, fmt.Errorf("writing the certificate of %q: the UID and resourceVersion of the request as reviewed are missing", csr.Name)
	}
	ctx, warnings := withWarnings(ctx)
	stored, err := w.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{})
	if err != nil {
		return nil, warnings.list(), err
	}
	return stored, warnings.list(), nil
}
