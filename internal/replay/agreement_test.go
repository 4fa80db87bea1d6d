package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// failed is the API server's validation_failure annotation naming each
// policy/binding pair with message "m".
func failed(t *testing.T, pairs ...[2]string) map[string]string {
	t.Helper()
	var fs []map[string]any
	for _, p := range pairs {
		fs = append(fs, map[string]any{"message": "m", "policy": p[0], "binding": p[1], "expressionIndex": 0, "validationActions": []string{"Audit"}})
	}
	b, err := json.Marshal(fs)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{FailureAnnotation: string(b)}
}

// auditPolicy is policy p forbidding mode "forbidden", deployed since at0,
// with three bindings: "all" audits every ConfigMap, "prod" audits prod's
// (and warns), "deny" only denies.
func auditPolicy() (*admissionregistrationv1.ValidatingAdmissionPolicy, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	p := policy("p", noForbidden, nil)
	p.CreationTimestamp = metav1.NewTime(at0.Add(-time.Hour))
	all := binding("p", audit, nil)
	all.Name = "all"
	prod := binding("p", []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn, admissionregistrationv1.Audit}, func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
	})
	prod.Name = "prod"
	d := binding("p", deny, nil)
	d.Name = "deny"
	for _, b := range []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{all, prod, d} {
		b.CreationTimestamp = metav1.NewTime(at0.Add(-time.Hour))
	}
	return p, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{prod, d, all}
}

// TestAgreementComparesEachAuditingBindingWithTheAPIServer: per request and
// auditing binding, the replay's Audited against the API server's
// annotation naming the policy and binding; disagreements listed either
// way; a binding without Audit is not compared; another policy's entries
// and an unreadable annotation count nowhere.
func TestAgreementComparesEachAuditingBindingWithTheAPIServer(t *testing.T) {
	p, bindings := auditPolicy()
	w := []ledger.Write{
		cm("alice", "prod", "a", ledger.OpCreate, 201, "forbidden"), // both audit, API server says both: 2 agree
		cm("bob", "dev", "b", ledger.OpCreate, 201, "forbidden"),    // "all" audits, API server says so; "prod" not matched: 2 agree
		cm("bob", "prod", "c", ledger.OpCreate, 201, "fine"),        // neither, API server says "all": 1 disagreement, 1 agree
		cm("carol", "dev", "d", ledger.OpCreate, 201, "forbidden"),  // "all" audits, API server says nothing (another policy's): 1 disagreement
		cm("dave", "dev", "e", ledger.OpCreate, 201, "forbidden"),   // unreadable annotation: not compared
	}
	w[0].Annotations = failed(t, [2]string{"p", "all"}, [2]string{"p", "prod"})
	w[1].Annotations = failed(t, [2]string{"p", "all"})
	w[2].Annotations = failed(t, [2]string{"p", "all"})
	w[3].Annotations = failed(t, [2]string{"q", "all"})
	w[4].Annotations = map[string]string{FailureAnnotation: "not json"}
	st := newStore(t, w)
	a, err := Agree(context.Background(), AgreementOptions{Writes: st, Policy: p, Bindings: bindings, Namespaces: todays})
	if err != nil {
		t.Fatal(err)
	}
	if st.scans != 1 {
		t.Errorf("%d reads of the writes for two auditing bindings, want 1", st.scans)
	}
	if fmt.Sprint(a.NotAuditing) != "[deny]" || len(a.Bindings) != 2 || a.Bindings[0].Binding != "all" || a.Bindings[1].Binding != "prod" {
		t.Fatalf("bindings %+v, not auditing %v", a.Bindings, a.NotAuditing)
	}
	all, prod := a.Bindings[0], a.Bindings[1]
	if all.Compared != 4 || all.Agreed != 2 || all.AuditedByAPIServer != 3 || all.AuditedByReplay != 3 || !all.Done {
		t.Errorf("binding all: %+v", all)
	}
	if prod.Compared != 4 || prod.Agreed != 4 || prod.AuditedByAPIServer != 1 || prod.AuditedByReplay != 1 || !prod.Done {
		t.Errorf("binding prod: %+v", prod)
	}
	if a.Compared != 8 || a.Agreed != 6 || a.Percent() != 75 || a.Unreadable != 1 || a.Scanned != 5 || a.Elapsed <= 0 {
		t.Errorf("agreement %+v (%.1f%%)", a, a.Percent())
	}
	if len(a.Disagreements) != 2 {
		t.Fatalf("disagreements %+v", a.Disagreements)
	}
	c, d := a.Disagreements[0], a.Disagreements[1]
	if c.Name != "c" || c.Binding != "all" || !c.APIServer || c.APIServerMessage != "m" || c.Replay != "admitted" || c.User != "bob" ||
		c.Resource != "configmaps" || c.WriteID != w[2].ID || c.Code != 201 {
		t.Errorf("first disagreement %+v", c)
	}
	if d.Name != "d" || d.APIServer || d.Replay != "audited" || d.ReplayMessage != "mode forbidden" {
		t.Errorf("second disagreement %+v", d)
	}
}

// TestAgreementWindowStartsAtTheDeployedVersion: writes before the
// binding's last change were judged by another version and are not
// compared; a status change (the type checker's) is not a change of the
// version; the list of disagreements is bounded, the counts are not.
func TestAgreementWindowStartsAtTheDeployedVersion(t *testing.T) {
	p, bindings := auditPolicy()
	w := []ledger.Write{
		cm("alice", "prod", "old1", ledger.OpCreate, 201, "forbidden"),
		cm("alice", "prod", "old2", ledger.OpCreate, 201, "forbidden"),
		cm("alice", "prod", "new1", ledger.OpCreate, 201, "forbidden"),
		cm("alice", "prod", "new2", ledger.OpCreate, 201, "forbidden"),
	}
	// Nothing annotated: every compared request disagrees.
	changed := metav1.NewTime(w[1].Time.Add(500 * time.Millisecond).Truncate(time.Second))
	later := metav1.NewTime(w[3].Time.Add(time.Hour))
	all := bindings[2]
	all.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Time: &changed}, {Manager: "kube-controller-manager", Subresource: "status", Time: &later}}
	if got, want := DeployedSince(p, all), changed.Add(time.Second); !got.Equal(want) {
		t.Fatalf("DeployedSince %v, want %v", got, want)
	}
	st := newStore(t, w)
	a, err := Agree(context.Background(), AgreementOptions{Writes: st, Policy: p, Bindings: []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{all},
		Namespaces: todays, MaxDisagreements: 1})
	if err != nil {
		t.Fatal(err)
	}
	if a.Compared != 2 || a.Agreed != 0 || len(a.Disagreements) != 1 || a.Disagreements[0].Name != "new1" || a.DisagreementsLeftOut != 1 {
		t.Errorf("agreement %+v", a)
	}
	// Since later than the version: the window starts there.
	a, err = Agree(context.Background(), AgreementOptions{Writes: st, Policy: p, Bindings: []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{all},
		Namespaces: todays, Since: w[3].Time})
	if err != nil || a.Compared != 1 || !a.Bindings[0].Since.Equal(w[3].Time) {
		t.Errorf("since the last write: %+v, %v", a, err)
	}
}

// TestAgreementHidesWhatThePersonMayNotList: requests of a resource the
// person may not list are neither compared nor listed.
func TestAgreementHidesWhatThePersonMayNotList(t *testing.T) {
	p, bindings := auditPolicy()
	w := cm("alice", "prod", "a", ledger.OpCreate, 201, "forbidden")
	st := newStore(t, []ledger.Write{w})
	a, err := Agree(context.Background(), AgreementOptions{Writes: st, Policy: p, Bindings: bindings, Namespaces: todays,
		MayList: func(group, resource string) bool { return resource != "configmaps" }})
	if err != nil || a.Compared != 0 || len(a.Disagreements) != 0 || a.Scanned != 1 {
		t.Errorf("a person who may not list configmaps: %+v, %v", a, err)
	}
}

// TestAgreementStopsWithItsContext: a cancelled comparison says which
// bindings it did not finish.
func TestAgreementStopsWithItsContext(t *testing.T) {
	p, bindings := auditPolicy()
	st := newStore(t, []ledger.Write{cm("alice", "prod", "a", ledger.OpCreate, 201, "forbidden")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a, err := Agree(ctx, AgreementOptions{Writes: st, Policy: p, Bindings: bindings, Namespaces: todays})
	if !errors.Is(err, context.Canceled) || len(a.Bindings) != 2 || a.Bindings[0].Done || a.Bindings[1].Done {
		t.Errorf("cancelled: %+v, %v", a, err)
	}
}

// TestAgreementReadsTheWritesOnceForAllBindings: three auditing bindings
// are compared in one read of the writes (the policy replayed with all of
// them), each with its own verdict: a binding that also denies is
// "denied" on its own, the others "audited" or "not matched".
func TestAgreementReadsTheWritesOnceForAllBindings(t *testing.T) {
	p, bindings := auditPolicy()
	dev := binding("p", []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny, admissionregistrationv1.Audit},
		func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
			s.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}
		})
	dev.Name, dev.CreationTimestamp = "dev", metav1.NewTime(at0.Add(-time.Hour))
	w := cm("bob", "dev", "b", ledger.OpCreate, 403, "forbidden")
	w.Annotations = failed(t, [2]string{"p", "all"}) // the API server says "all" only: "dev" disagrees
	st := newStore(t, []ledger.Write{w})
	a, err := Agree(context.Background(), AgreementOptions{Writes: st, Policy: p, Bindings: append(bindings, dev), Namespaces: todays})
	if err != nil {
		t.Fatal(err)
	}
	if st.scans != 1 || len(a.Bindings) != 3 || a.Compared != 3 || a.Agreed != 2 {
		t.Fatalf("%d reads, agreement %+v", st.scans, a)
	}
	if len(a.Disagreements) != 1 || a.Disagreements[0].Binding != "dev" || a.Disagreements[0].Replay != "denied" ||
		a.Disagreements[0].ReplayMessage != "mode forbidden" || a.Disagreements[0].APIServer {
		t.Errorf("disagreements %+v", a.Disagreements)
	}
}
