package seed

import (
	"encoding/json"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// LegacyCSRName is the demo CSR whose spec.request is not PEM at all.
const LegacyCSRName = "legacy-invalid-request"

// LegacyCSR returns the etcd key and JSON value of a CSR whose spec.request is
// not PEM. Today's API server refuses such a request on create, so it can only
// exist as data written by an older or buggy writer; the console must still
// render it and say what is wrong. The API server reads JSON from etcd as well
// as protobuf, so writing JSON under the registry key is enough.
func LegacyCSR() (key, value string, err error) {
	csr := certv1.CertificateSigningRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              LegacyCSRName,
			UID:               types.UID("4f1f6a52-6d1e-4c57-9d9e-legacy000001"),
			CreationTimestamp: metav1.NewTime(time.Now().Add(-72 * time.Hour).Truncate(time.Second)),
		},
		Spec: certv1.CertificateSigningRequestSpec{
			Request:    []byte("this is not a PEM-encoded certificate request"),
			SignerName: "kubernetes.io/kube-apiserver-client",
			Usages:     []certv1.KeyUsage{certv1.UsageClientAuth},
			Username:   "legacy-writer",
		},
	}
	b, err := json.Marshal(csr)
	return "/registry/certificatesigningrequests/" + LegacyCSRName, string(b), err
}
