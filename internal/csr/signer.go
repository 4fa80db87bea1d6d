package csr

import "strings"

// SignerAuthzNames are the resource names of the synthetic "signers" resource
// under which RBAC may grant a verb (approve, sign) for signer: the signer
// itself, then its domain with a wildcard ("example.com/*"). The API server's
// CertificateApproval admission plugin allows an approval when either is
// allowed (plugin/pkg/admission/certificates/util.go, IsAuthorizedForSignerName
// and buildWildcardAttributes, which takes the part before the first "/"), so a
// console that asks only for the exact name hides decisions RBAC permits.
func SignerAuthzNames(signer string) []string {
	domain, _, _ := strings.Cut(signer, "/")
	wildcard := domain + "/*"
	if wildcard == signer {
		return []string{signer}
	}
	return []string{signer, wildcard}
}
