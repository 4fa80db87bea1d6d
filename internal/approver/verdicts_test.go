package approver

import (
	"errors"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
)

func TestCombineDecidesOnlyWhenMatchingPoliciesAgree(t *testing.T) {
	approve := func(p string) csrpolicy.Verdict {
		return csrpolicy.Verdict{Policy: p, Matched: true, Decision: csrpolicy.Approve}
	}
	deny := func(p string) csrpolicy.Verdict {
		return csrpolicy.Verdict{Policy: p, Matched: true, Decision: csrpolicy.Deny}
	}
	none := func(p string) csrpolicy.Verdict { return csrpolicy.Verdict{Policy: p} }
	broken := func(p string) csrpolicy.Verdict { return csrpolicy.Verdict{Policy: p, Err: errors.New("cost limit")} }
	for _, tc := range []struct {
		name     string
		verdicts []csrpolicy.Verdict
		decide   string // the deciding policy, "" for none
		conflict bool
		errors   int
	}{
		{name: "no policy", decide: ""},
		{name: "none matches", verdicts: []csrpolicy.Verdict{none("a"), none("b")}},
		{name: "one approves", verdicts: []csrpolicy.Verdict{none("a"), approve("b")}, decide: "b"},
		{name: "two approve: the first by name", verdicts: []csrpolicy.Verdict{approve("a"), approve("b")}, decide: "a"},
		{name: "two deny", verdicts: []csrpolicy.Verdict{none("a"), deny("b"), deny("c")}, decide: "b"},
		// Deny does not win: contradicting rules are left to a person.
		{name: "approve and deny", verdicts: []csrpolicy.Verdict{approve("a"), deny("b")}, conflict: true},
		{name: "deny and approve", verdicts: []csrpolicy.Verdict{deny("a"), none("b"), approve("c")}, conflict: true},
		// A policy that could not run might have said otherwise.
		{name: "approve and an error", verdicts: []csrpolicy.Verdict{approve("a"), broken("b")}, errors: 1},
		{name: "only errors", verdicts: []csrpolicy.Verdict{broken("a"), broken("b")}, errors: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Combine(tc.verdicts)
			got := ""
			if o.Decide {
				got = o.Verdict.Policy
			}
			if got != tc.decide || o.Conflict != tc.conflict || len(o.Errors) != tc.errors {
				t.Errorf("decided by %q, conflict %v, %d errors; want %q, %v, %d", got, o.Conflict, len(o.Errors), tc.decide, tc.conflict, tc.errors)
			}
		})
	}
}
