package csrpolicy

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// Past is a request people already decided, as the policy sees it.
type Past struct {
	Input
	// Decision is the person's: Approve or Deny.
	Decision Decision
}

// Agreement is how a policy would have decided requests already decided.
type Agreement struct {
	Checked int
	// Agreed: the policy decides as the person did. Disagreed: it decides the
	// other way. Undecided: it does not decide (left to people). Errors: it
	// could not run on the request.
	Agreed     int
	Disagreed  []Past
	Undecided  int
	Errors     int
	FirstError error
}

// Compare runs the policy on each past decision of its signers.
func (pr *Program) Compare(ctx context.Context, past []Past) Agreement {
	var a Agreement
	for _, p := range past {
		if !pr.AppliesTo(p.CSR.Spec.SignerName) || !pr.Covers(p.CSR.Spec.Username, p.CSR.Spec.Groups) {
			continue
		}
		a.Checked++
		v := pr.Evaluate(ctx, p.Input)
		switch {
		case v.Err != nil:
			a.Errors++
			if a.FirstError == nil {
				a.FirstError = v.Err
			}
		case !v.Matched:
			a.Undecided++
		case v.Decision == p.Decision:
			a.Agreed++
		default:
			a.Disagreed = append(a.Disagreed, p)
		}
	}
	return a
}

// DecisionOf is the decision on c: Approve or Deny, "" while pending. The
// API server never lets a request carry both; were it to, Denied wins, as
// in the queue (csrqueue.State).
func DecisionOf(c *certificatesv1.CertificateSigningRequest) Decision {
	d := Decision("")
	for _, cond := range c.Status.Conditions {
		switch {
		case cond.Status == "False":
		case cond.Type == certificatesv1.CertificateDenied:
			return Deny
		case cond.Type == certificatesv1.CertificateApproved:
			d = Approve
		}
	}
	return d
}
