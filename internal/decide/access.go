package decide

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

// MayDecide returns a function reporting whether the signed-in user may
// approve and deny CSRs of a signer (update on certificatesigningrequests/approval
// and approve on signers/<signer> or signers/<domain>/*, by
// SelfSubjectAccessReview, as csr.SignerAuthzNames explains), remembering
// answers for the life of the function (one request). It returns nil when the
// user may decide nothing: read-only mode, or no right to update approvals at
// all. An access review that fails allows nothing (the pages hide the
// buttons); the API server still decides on a write.
func (s Decisions) MayDecide(ctx context.Context) func(signer string) bool {
	if s.ReadOnly {
		return nil
	}
	canUpdate, err := s.Access.Can(ctx, "update", "certificates.k8s.io", "certificatesigningrequests", "approval", "")
	if err != nil {
		s.log().Warn("access review failed", "check", "update certificatesigningrequests/approval", "err", err)
		return nil
	}
	if !canUpdate {
		return nil
	}
	answers := map[string]bool{} // by resource name: signers of one domain share the wildcard's
	may := func(resourceName string) bool {
		if ok, seen := answers[resourceName]; seen {
			return ok
		}
		ok, err := s.Access.Can(ctx, "approve", "certificates.k8s.io", "signers", "", resourceName)
		if err != nil {
			s.log().Warn("access review failed", "check", "approve signers", "signer", resourceName, "err", err)
		}
		answers[resourceName] = ok && err == nil
		return answers[resourceName]
	}
	return func(signer string) bool {
		return slices.ContainsFunc(csr.SignerAuthzNames(signer), may)
	}
}
