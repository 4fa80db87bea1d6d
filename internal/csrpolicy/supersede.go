package csrpolicy

import (
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// ReasonSuperseded is the reason of the Denied condition the approver writes
// on an older pending duplicate of a request a SupersedeDuplicates policy
// approved.
const ReasonSuperseded = "Superseded"

// DuplicateKey is what makes two requests duplicates, a kubelet's retries:
// the same requester (spec.username), signer, subject (common name,
// organizations, organizational units, as decoded) and key usages (in any
// order). SANs and keys are not in it: a retry may carry a new key and the
// Node's current addresses. r is c's decoded request; "" when it is nil (a
// request that does not decode has no duplicates).
func DuplicateKey(c *certificatesv1.CertificateSigningRequest, r *csr.Request) string {
	if r == nil {
		return ""
	}
	usages := make([]string, len(c.Spec.Usages))
	for i, u := range c.Spec.Usages {
		usages[i] = string(u)
	}
	slices.Sort(usages)
	usages = slices.Compact(usages)
	orgs := slices.Clone(r.Organizations)
	slices.Sort(orgs)
	ous := slices.Clone(r.OrganizationalUnit)
	slices.Sort(ous)
	// \x00 and \x01 keep the parts apart. The requester comes first and is
	// the authenticator's, so a subject crafted with them could at worst make
	// two of its own requester's requests duplicates, never another's.
	return strings.Join([]string{
		c.Spec.Username, c.Spec.SignerName, r.CommonName,
		strings.Join(orgs, "\x01"), strings.Join(ous, "\x01"), strings.Join(usages, "\x01"),
	}, "\x00")
}

// Newer reports whether a was created after b, by creation time then name:
// the order in which a newer duplicate supersedes an older one.
func Newer(a, b *certificatesv1.CertificateSigningRequest) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.After(b.CreationTimestamp.Time)
	}
	return a.Name > b.Name
}
