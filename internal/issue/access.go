package issue

import (
	"context"
	"slices"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// Access answers whether the signed-in user may do something
// (SelfSubjectAccessReview, cached per identity by kube.Access).
type Access interface {
	Can(ctx context.Context, verb, group, resource, subresource, name string) (bool, error)
}

// MaySign reports whether the signed-in user may write the certificate of a
// CSR of signer: update on certificatesigningrequests/status, and sign on
// signers/<signer> or signers/<domain>/* (the CertificateSigning admission
// plugin, upstream plugin/pkg/admission/certificates/signing/admission.go,
// through certificates.IsAuthorizedForSignerName, which also allows the
// domain's wildcard). A failed review allows nothing: the page hides the
// form, and the API server still decides on a write.
func MaySign(ctx context.Context, a Access, signer string) bool {
	if a == nil {
		return false
	}
	ok, err := a.Can(ctx, "update", "certificates.k8s.io", "certificatesigningrequests", "status", "")
	if err != nil || !ok {
		return false
	}
	return slices.ContainsFunc(csr.SignerAuthzNames(signer), func(name string) bool {
		ok, err := a.Can(ctx, "sign", "certificates.k8s.io", "signers", "", name)
		return ok && err == nil
	})
}
