package present

import (
	"errors"
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// TestPolicyPageAgreementSection: fetched after the page when a binding
// audits or the bindings are unknown; "nothing to compare", without a
// fetch, when none audits.
func TestPolicyPageAgreementSection(t *testing.T) {
	pol := replicaPolicy()
	for _, tc := range []struct {
		name     string
		bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
		follow   bool
	}{
		{"an auditing binding", []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			binding("deny", pol.Name, admissionregistrationv1.Deny), binding("audit", pol.Name, admissionregistrationv1.Warn, admissionregistrationv1.Audit)}, true},
		{"bindings unknown", nil, true},
		{"no auditing binding", []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			binding("deny", pol.Name, admissionregistrationv1.Deny), binding("other", "another-policy", admissionregistrationv1.Audit)}, false},
		{"no binding", []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := insightByID(t, PolicyDetail(pol, tc.bindings, policyNow), "policy-agreement")
			if tc.follow {
				if in.Follow != urls.PolicyAgreement(pol.Name) || len(in.Findings) != 0 {
					t.Errorf("follow %q, findings %v", in.Follow, findingCodes(in.Findings))
				}
				if v, _ := richField(in, "Comparison"); v.Href != urls.PolicyAgreement(pol.Name) {
					t.Errorf("no link to the comparison without script: %+v", v)
				}
				return
			}
			if in.Follow != "" || !slices.Equal(findingCodes(in.Findings), []string{"agreement-no-audit"}) || in.Findings[0].Title != "No binding with Audit: nothing to compare" {
				t.Errorf("follow %q, findings %+v", in.Follow, in.Findings)
			}
		})
	}
}

// TestAgreementWords: the counts, the percentage to one decimal, each
// binding's line, each disagreement with the ledger history of a console
// kind's object (none for a ConfigMap), and what stopped or hid part of it.
func TestAgreementWords(t *testing.T) {
	since := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	a := replay.Agreement{
		Bindings:    []replay.BindingAgreement{{Binding: "audit", Since: since, Compared: 200, Agreed: 199, AuditedByAPIServer: 12, AuditedByReplay: 11, Done: true}},
		NotAuditing: []string{"deny"}, Compared: 200, Agreed: 199, Elapsed: 1234 * time.Millisecond,
		Disagreements: []replay.Disagreement{
			{Time: since.Add(time.Minute), GroupKey: replay.GroupKey{User: "alice", Resource: "csidrivers.storage.k8s.io", Operation: "CREATE"},
				Name: "d1", Code: 201, Binding: "audit", Replay: "admitted", APIServer: true, APIServerMessage: "a banned name", AuditID: "x"},
		},
		DisagreementsLeftOut: 3,
	}
	in := Agreement(a, "", nil)
	for label, want := range map[string]string{"Requests compared": "200", "Agreeing": "199", "Agreement": "99.5%", "Disagreeing": "1", "Compared in": "1.234s"} {
		if v, ok := richField(in, label); !ok || v.Text != want {
			t.Errorf("%s = %q, want %q", label, v.Text, want)
		}
	}
	if v, _ := richField(in, "Bindings compared"); len(v.Lines) != 1 || v.Lines[0] != "audit: 199 of 200 agree, since 2026-12-06 10:00:00 (audited: 12 by the API server, 11 by the replay)" {
		t.Errorf("bindings %q", v.Lines)
	}
	if v, _ := richField(in, "Not compared"); !slices.Equal(v.Lines, []string{"deny"}) {
		t.Errorf("not compared %q", v.Lines)
	}
	if !slices.Equal(findingCodes(in.Findings), []string{"agreement-limits", "agreement-left-out"}) {
		t.Errorf("findings %v", findingCodes(in.Findings))
	}
	if len(in.Table.Rows) != 1 {
		t.Fatalf("rows %+v", in.Table.Rows)
	}
	row := in.Table.Rows[0]
	if row.TestID != "agreement-disagreement" || row.Cells[0].Href != urls.LedgerObject("csidrivers", "d1", "") ||
		!slices.Equal(row.Cells[1].Lines, []string{"CREATE csidrivers.storage.k8s.io d1", "by alice, HTTP 201"}) ||
		row.Cells[3].Text != "admitted" || row.Cells[4].Text != "audited" || !slices.Equal(row.Cells[4].Lines, []string{"a banned name"}) {
		t.Errorf("row %+v", row)
	}

	// A ConfigMap has no ledger history; a stopped comparison, namespaces
	// not read, nothing compared are said.
	a = replay.Agreement{Bindings: []replay.BindingAgreement{{Binding: "audit", Since: since}},
		Disagreements: []replay.Disagreement{{GroupKey: replay.GroupKey{Resource: "configmaps", Namespace: "prod"}, Name: "c", Replay: "audited"}}}
	in = Agreement(a, "stopped after 30s", errors.New("forbidden"))
	if v, _ := richField(in, "Agreement"); v.Text != "—" {
		t.Errorf("agreement of nothing compared: %q", v.Text)
	}
	if !slices.Equal(findingCodes(in.Findings), []string{"agreement-none", "agreement-stopped", "agreement-namespaces", "agreement-limits"}) {
		t.Errorf("findings %v", findingCodes(in.Findings))
	}
	if c := in.Table.Rows[0].Cells; c[0].Href != "" || c[1].Lines[0] != " configmaps prod/c" || c[4].Text != "not audited" {
		t.Errorf("row %+v", in.Table.Rows[0])
	}
}
