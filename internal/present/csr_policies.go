package present

import (
	"errors"
	"fmt"

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
}

// CSRPoliciesPanel presents the verdicts of the policies naming the
// request's signer; others counts the policies for other signers.
func CSRPoliciesPanel(outcomes []PolicyOutcome, others int) model.CSRPoliciesPanel {
	p := model.CSRPoliciesPanel{ListHref: urls.CRInstances(csrpolicy.CRD)}
	for _, o := range outcomes {
		v := model.PolicyVerdict{Policy: o.Policy.Name, Href: urls.CRInstance(csrpolicy.CRD, "", o.Policy.Name)}
		switch {
		case o.Err != nil:
			v.Badge = model.Badge{Text: "does not compile", Tone: model.ToneError}
			v.Error = o.Err.Error()
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
		p.Note = fmt.Sprintf("None of the %d approval %s names this request's signer.", others, pluralWord(others, "policy", "policies"))
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

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
