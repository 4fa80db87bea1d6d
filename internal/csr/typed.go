package csr

import certificatesv1 "k8s.io/api/certificates/v1"

// Typed gives a typed CSR its apiVersion and kind (client-go's typed objects
// carry none), for the YAML of a replaced request and the audit's diff.
func Typed(r *certificatesv1.CertificateSigningRequest) *certificatesv1.CertificateSigningRequest {
	r = r.DeepCopy()
	r.APIVersion, r.Kind = certificatesv1.SchemeGroupVersion.String(), "CertificateSigningRequest"
	return r
}
