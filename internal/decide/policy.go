package decide

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
)

// Previewed is one request a policy's preview listed: the object shown (its
// UID) and its resourceVersion then.
type Previewed struct {
	Ref
	ResourceVersion string
}

// Skipped is a previewed request left undecided, and why.
type Skipped struct {
	Ref Ref
	Why string
}

// Why a previewed request is skipped.
const (
	SkipGone     = "it was deleted since the preview"
	SkipReplaced = "another request was created under its name since the preview"
	SkipChanged  = "it changed since the preview"
	SkipDecided  = "it was decided since the preview"
	SkipPolicy   = "the policy no longer approves it"
)

// FollowPolicy approves, as user, the previewed requests that are still
// exactly what the preview showed and that policy still approves ("approve
// everything policy X approves", shadow mode): current reads a request as the
// shared cache holds it now, approves re-runs the policy on it. A request
// deleted, replaced under its name, changed (another resourceVersion),
// decided, or no longer approved is skipped and reported, never decided. The
// others are approved like a bulk decision (Batch: each on the object with
// the UID previewed, audited), the condition's message naming the policy's
// version (PolicyText): approves must run that version, and says no otherwise.
func (s Decisions) FollowPolicy(ctx context.Context, user string, policy csrpolicy.Version, previewed []Previewed,
	current func(name string) (*certificatesv1.CertificateSigningRequest, bool),
	approves func(*certificatesv1.CertificateSigningRequest) bool) ([]Decision, []Skipped, error) {
	if len(previewed) == 0 {
		return nil, nil, invalidf("The confirmation names no request; open the preview again.")
	}
	if len(previewed) > MaxBatch {
		return nil, nil, invalidf("%d requests in one step; a step approves at most %d.", len(previewed), MaxBatch)
	}
	var refs []Ref
	var skipped []Skipped
	for _, p := range previewed {
		c, ok := current(p.Name)
		why := ""
		switch {
		case !ok:
			why = SkipGone
		case c.UID != p.UID:
			why = SkipReplaced
		case c.ResourceVersion != p.ResourceVersion:
			why = SkipChanged
		case isDecided(c):
			why = SkipDecided
		case !approves(c):
			why = SkipPolicy
		}
		if why != "" {
			skipped = append(skipped, Skipped{Ref: p.Ref, Why: why})
			continue
		}
		refs = append(refs, p.Ref)
	}
	if len(refs) == 0 {
		return nil, skipped, nil
	}
	out, err := s.Batch(ctx, user, refs, true, PolicyText(policy))
	return out, skipped, err
}

// PolicyText is the approver's words a policy-following approval writes
// into the condition's message ("Approved by <user> via clusterdesk: …"):
// the policy's version as csrpolicy.VersionText traces it (issue 47, item 4),
// so the ledger counts the decision to that version of the policy.
func PolicyText(policy csrpolicy.Version) string {
	return "following " + csrpolicy.VersionText(policy) + " (shadow)"
}

func isDecided(c *certificatesv1.CertificateSigningRequest) bool {
	for _, cond := range c.Status.Conditions {
		switch cond.Type {
		case certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			return true
		}
	}
	return false
}
