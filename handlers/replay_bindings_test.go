package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// A policy bound twice is replayed with both bindings, on the replay page
// and from the editor (issue 45): team-label is bound by team-label-binding
// (Audit) and team-label-warn (Warn) in editorReplayConsole.

// TestReplayPageDraftHoldsEveryBinding: the page's starting text is the
// policy with both bindings; replayed as it is, nothing changes (the
// deployed version is the same policy with the same two bindings); with
// team-label-binding made Deny, the recorded ConfigMap is newly denied,
// and the comparison names both deployed bindings.
func TestReplayPageDraftHoldsEveryBinding(t *testing.T) {
	ts, alice := editorReplayConsole(t, everyReplayKind)
	code, form := ts.getDoc(t, alice, urls.PolicyReplay("team-label"))
	text := form.Find("[data-testid=replay-draft]").Text()
	if code != http.StatusOK || strings.Count(text, "kind: ValidatingAdmissionPolicyBinding") != 2 ||
		!strings.Contains(text, "name: team-label-binding") || !strings.Contains(text, "name: team-label-warn") {
		t.Fatalf("status %d, starting text\n%s", code, text)
	}
	_, same := replayOutcome(t, ts, alice, urls.PolicyReplay("team-label"), replayForm(text), false)
	if d, w := same.Find("[data-testid=replay-newly-denied]").Text(), same.Find("[data-testid=replay-newly-warned]").Text(); d != "0" || w != "0" {
		t.Fatalf("the deployed text replayed: newly denied %q, newly warned %q: %s", d, w, same.Find("main").Text())
	}
	denying := strings.Replace(text, "- Audit", "- Deny", 1)
	if denying == text {
		t.Fatalf("no Audit action to change in\n%s", text)
	}
	_, out := replayOutcome(t, ts, alice, urls.PolicyReplay("team-label"), replayForm(denying), false)
	if got := out.Find("[data-testid=replay-newly-denied]").Text(); got != "1" {
		t.Fatalf("newly denied %q, want 1: %s", got, out.Find("main").Text())
	}
	if dep := out.Find("[data-testid=replay-deployed]").Text(); !strings.Contains(dep, `its bindings "team-label-binding", "team-label-warn"`) {
		t.Errorf("deployed words %q", dep)
	}
}

// TestReplayPageRefusesBindingsThatAreNotThePolicys: a binding of another
// policy, or two bindings of one name, in the draft is said beside the
// form and nothing runs.
func TestReplayPageRefusesBindingsThatAreNotThePolicys(t *testing.T) {
	ts, alice := editorReplayConsole(t, everyReplayKind)
	for _, c := range []struct{ name, text, want string }{
		{"another policy's binding", teamLabelPolicy + "---\n" + teamLabelBinding + "---\n" + strings.ReplaceAll(teamLabelWarn, "policyName: team-label", "policyName: admit-all"),
			`the binding "team-label-warn" binds the policy "admit-all", not the draft's policy "team-label"`},
		{"two bindings of one name", teamLabelPolicy + "---\n" + teamLabelBinding + "---\n" + teamLabelBinding, `two bindings named "team-label-binding"`},
		{"no binding", teamLabelPolicy, "at least one ValidatingAdmissionPolicyBinding"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec, doc := replayOutcome(t, ts, alice, urls.PolicyReplay("team-label"), replayForm(c.text), false)
			if msg := doc.Find("[data-testid=replay-error]").Text(); rec.Code != http.StatusUnprocessableEntity || !strings.Contains(msg, c.want) ||
				doc.Find("[data-testid=replay-result]").Length() != 0 {
				t.Errorf("status %d, error %q, want %q and no result", rec.Code, msg, c.want)
			}
		})
	}
}

// TestEditorReplaysABindingBesideThePolicysOtherBindings: team-label-binding
// edited to Deny is replayed with the policy and team-label-warn as
// deployed, and the basis says so.
func TestEditorReplaysABindingBesideThePolicysOtherBindings(t *testing.T) {
	ts, alice := editorReplayConsole(t, everyReplayKind)
	editor, outcome, code := editorReplayOutcome(t, ts, alice, kube.AdmissionPolicyBindings, "team-label-binding",
		editorForm(strings.Replace(teamLabelBinding, "Audit", "Deny", 1)))
	if basis := editor.Find("[data-testid=editor-replay-basis]").Text(); code != http.StatusOK ||
		!strings.Contains(basis, `its other binding "team-label-warn" as deployed, unchanged`) {
		t.Fatalf("status %d, basis %q", code, basis)
	}
	// The write was warned by the deployed version (team-label-warn) and
	// is denied now: newly denied, not newly warned.
	if d, w := outcome.Find("[data-testid=replay-newly-denied]").Text(), outcome.Find("[data-testid=replay-newly-warned]").Text(); d != "1" || w != "0" {
		t.Fatalf("newly denied %q, newly warned %q: %s", d, w, outcome.Text())
	}
	editor, _, _ = editorReplayOutcome(t, ts, alice, kube.AdmissionPolicies, "team-label", editorForm(teamLabelPolicy))
	if basis := editor.Find("[data-testid=editor-replay-basis]").Text(); !strings.Contains(basis, `its bindings "team-label-binding", "team-label-warn"`) {
		t.Errorf("the policy's basis %q", basis)
	}
}
