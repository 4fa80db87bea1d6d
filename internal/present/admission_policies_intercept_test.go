package present

import (
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/celmatch"
	"github.com/clusterdesk/clusterdesk/internal/intercept"
)

func TestInterceptPolicies(t *testing.T) {
	answers := []intercept.PolicyAnswer{
		{Policy: "p1", Binding: "b1", Applies: true, Actions: []string{"Deny"}, FailurePolicy: "Fail", Denies: true,
			Outcome: &celmatch.PolicyOutcome{Validations: []celmatch.Validation{{Expression: "false", Result: "fail", Message: "no", Reason: "Invalid", Denies: true}}}},
		{Policy: "p2", Binding: "b2", Applies: true, Actions: []string{"Warn"}, FailurePolicy: "Fail", Warns: true,
			Outcome: &celmatch.PolicyOutcome{Validations: []celmatch.Validation{{Expression: "false", Result: "fail", Message: "careful", Denies: true}}}},
		{Policy: "p3", Binding: "b3", Applies: true, Actions: []string{"Deny"}, FailurePolicy: "Fail", Unresolved: true, Params: "params not resolved: x"},
		{Policy: "p4", Binding: "b4", Reasons: []string{"Policy: no resourceRule matches."}},
	}
	got := InterceptPolicies(answers)
	want := []string{"denies", "warns", "unknown", "does not apply"}
	if len(got.Table.Rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(got.Table.Rows), len(want))
	}
	for i, w := range want {
		if b := got.Table.Rows[i].Cells[2].Badges[0].Text; b != w {
			t.Errorf("row %d: badge %q, want %q", i, b, w)
		}
	}
	if !strings.Contains(got.Intro, "3 policy bindings apply of 4") || !strings.Contains(got.Intro, "'p1' with binding 'b1' denied request: no") ||
		!strings.Contains(got.Intro, "Warnings: Validation failed for ValidatingAdmissionPolicy 'p2' with binding 'b2': careful") {
		t.Errorf("intro %q", got.Intro)
	}
	if !strings.Contains(strings.Join(got.Table.Rows[2].Cells[4].Lines, " "), "params not resolved") {
		t.Errorf("unresolved params not said: %v", got.Table.Rows[2].Cells[4].Lines)
	}
}

// An authorizer check that could not be asked makes the binding unknown,
// saying why; auditAnnotations are listed key → value.
func TestInterceptPoliciesUnknownAndAuditAnnotations(t *testing.T) {
	answers := []intercept.PolicyAnswer{
		{Policy: "p1", Binding: "b1", Applies: true, Actions: []string{"Deny"}, FailurePolicy: "Fail", Unknown: true, UnknownWhy: "no rights",
			Outcome: &celmatch.PolicyOutcome{Validations: []celmatch.Validation{{Expression: "authorizer.group('').resource('pods').check('get').allowed()", Result: "fail", Denies: true, AsksAuthorizer: true}}}},
		{Policy: "p2", Binding: "b2", Applies: true, Actions: []string{"Deny"}, FailurePolicy: "Fail",
			Outcome: &celmatch.PolicyOutcome{Validations: []celmatch.Validation{{Expression: "true", Result: "pass"}},
				AuditAnnotations: []celmatch.AuditAnnotation{
					{Key: "p2/who", ValueExpression: "'jane'", Result: celmatch.AnnotationPublished, Value: "jane"},
					{Key: "p2/none", ValueExpression: "''", Result: celmatch.AnnotationExcluded},
				}}},
	}
	got := InterceptPolicies(answers)
	if b := got.Table.Rows[0].Cells[2].Badges[0].Text; b != "unknown" || !strings.Contains(strings.Join(got.Table.Rows[0].Cells[4].Lines, " "), "could not be asked (no rights)") {
		t.Errorf("unknown binding: badge %q, why %v", b, got.Table.Rows[0].Cells[4].Lines)
	}
	if l := got.Table.Rows[0].Cells[5].Code[0].Label; l != "validation 1: unknown (an authorizer check could not be asked)" {
		t.Errorf("the guessed validation is shown as %q", l)
	}
	if strings.Contains(got.Intro, "reject") {
		t.Errorf("intro rejects on a guess: %q", got.Intro)
	}
	var labels []string
	for _, s := range got.Table.Rows[1].Cells[5].Code {
		labels = append(labels, s.Label)
	}
	all := strings.Join(labels, " | ")
	if !strings.Contains(all, "auditAnnotation p2/who → jane") || !strings.Contains(all, "auditAnnotation p2/none: not set") {
		t.Errorf("audit annotations: %s", all)
	}
}
