package approver

import (
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
)

// Outcome is what the approver does with one request, from the verdicts of
// every policy naming its signer.
type Outcome struct {
	// Decide is set when the request is decided, by Verdict's policy.
	Decide  bool
	Verdict csrpolicy.Verdict
	// Conflict: policies that match disagree (one approves, one denies).
	Conflict bool
	// Errors are the verdicts of policies that could not run on the request.
	Errors []csrpolicy.Verdict
}

// Combine applies the approver's rule to the verdicts of one request, in
// policy name order:
//   - no policy matches: nothing is decided, the request is left to people;
//   - a policy could not run (an evaluation error, a request that does not
//     decode): nothing is decided, whatever the others say, since the broken
//     policy might have said otherwise;
//   - the policies that match disagree: nothing is decided. Deny does not win:
//     two rules an admin wrote contradicting each other is a question for a
//     person, and the approver deciding either way would hide it;
//   - otherwise the first matching policy (by name) decides, so the condition
//     names one policy, always the same for the same set of policies.
func Combine(verdicts []csrpolicy.Verdict) Outcome {
	var o Outcome
	var first *csrpolicy.Verdict
	for i, v := range verdicts {
		switch {
		case v.Err != nil:
			o.Errors = append(o.Errors, v)
		case !v.Matched:
		case first == nil:
			first = &verdicts[i]
		case v.Decision != first.Decision:
			o.Conflict = true
		}
	}
	if first != nil && !o.Conflict && len(o.Errors) == 0 {
		o.Decide, o.Verdict = true, *first
	}
	return o
}
