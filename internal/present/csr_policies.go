package present

import (
	"errors"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/approvers"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// PolicyOutcome is one policy's compiled form or compile error, and its
// verdict when it ran.
type PolicyOutcome struct {
	Policy  csrpolicy.Policy
	Err     error // the object does not read or the policy does not compile
	Verdict csrpolicy.Verdict
	// NotCovered: the policy's spec.requesters do not name the request's
	// requester (issue 47, item 2), so it was not evaluated.
	NotCovered bool
}

// CSRPoliciesPanel presents the verdicts of the policies naming the
// request's signer; others counts the policies for other signers.
func CSRPoliciesPanel(outcomes []PolicyOutcome, others int) model.CSRPoliciesPanel {
	p := model.CSRPoliciesPanel{ListHref: urls.List(csrPolicyKind)}
	for _, o := range outcomes {
		v := model.PolicyVerdict{Policy: o.Policy.Name, Href: urls.Object(csrPolicyKind, o.Policy.Name),
			AgreementHref: urls.CSRPolicy(o.Policy.Name), Requesters: o.Policy.Requesters.String()}
		switch {
		case o.Err != nil:
			v.Badge = model.Badge{Text: "does not compile", Tone: model.ToneError}
			v.Error = o.Err.Error()
		case o.NotCovered:
			v.Badge = model.Badge{Text: "not this requester", Tone: model.ToneNeutral, Hint: "the policy covers " + v.Requesters}
		case o.Verdict.Err != nil:
			v.Badge = model.Badge{Text: "error", Tone: model.ToneError}
			v.Error = verdictError(o.Verdict.Err)
		case !o.Verdict.Matched:
			v.Badge = model.Badge{Text: "does not decide", Tone: model.ToneNeutral, Hint: "the expression is false for this request"}
		case o.Verdict.Decision == csrpolicy.Approve:
			v.Badge = model.Badge{Text: "would approve", Tone: model.ToneOK}
			v.Reason, v.Message = o.Verdict.Reason, o.Verdict.Message
		default:
			v.Badge = model.Badge{Text: "would deny", Tone: model.ToneError}
			v.Reason, v.Message = o.Verdict.Reason, o.Verdict.Message
		}
		p.Verdicts = append(p.Verdicts, v)
	}
	switch {
	case len(outcomes) == 0 && others == 0:
		p.Note = "No approval policy exists yet."
	case len(outcomes) == 0:
		p.Note = fmt.Sprintf("None of the %d approval %s names this request's signer.", others, plural(others, "policy", "policies"))
	default:
		p.Note = "Shadow mode: the verdicts are shown, nothing acts on them."
	}
	return p
}

func verdictError(err error) string {
	if errors.Is(err, csrpolicy.ErrUndecodable) {
		return "spec.request does not decode, so no policy decides it"
	}
	return err.Error()
}

// PolicyAgreementPage presents a policy's comparison with past decisions:
// compared of the decided requests of its signers, the newest of decided.
func PolicyAgreementPage(pol csrpolicy.Policy, polErr error, a csrpolicy.Agreement, compared, decided, automated int) model.PolicyAgreementPage {
	p := model.PolicyAgreementPage{Policy: pol.Name, PolicyHref: urls.Object(csrPolicyKind, pol.Name),
		Signers: strings.Join(pol.Signers, ", "), Decision: string(pol.Decision), Requesters: pol.Requesters.String()}
	if polErr != nil {
		p.Error = polErr.Error()
		return p
	}
	p.Note = fmt.Sprintf("Compared with the %d decided %s of its signers still in the cluster", compared, plural(compared, "request", "requests"))
	if decided > compared {
		p.Note += fmt.Sprintf(" (the newest %d of %d)", compared, decided)
	}
	if automated > 0 {
		p.Note += fmt.Sprintf("; %d decided by clusterdesk approver %s left out (a policy running alone would agree with itself)", automated, plural(automated, "is", "are"))
	}
	p.Note += "; the controller-manager deletes decided requests an hour after the decision."
	p.Checked, p.Agreed, p.Undecided, p.Errors = a.Checked, a.Agreed, a.Undecided, a.Errors
	if a.FirstError != nil {
		p.FirstError = verdictError(a.FirstError)
	}
	for _, d := range a.Disagreed {
		row := model.Disagreement{Name: d.CSR.Name, Href: urls.CSR(d.CSR.Name), By: approvers.DecidedBy(d.CSR)}
		for _, c := range d.CSR.Status.Conditions {
			if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied {
				row.People, row.Reason, row.Message = string(c.Type), c.Reason, c.Message
				break
			}
		}
		row.Policy = "would approve"
		if pol.Decision == csrpolicy.Deny {
			row.Policy = "would deny"
		}
		p.Disagreements = append(p.Disagreements, row)
	}
	return p
}
