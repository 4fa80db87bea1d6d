package csrqueue

import (
	"net/url"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// policyObject is a CSRApprovalPolicy as the API server serves it.
func policyObject(name, signer, expression, decision string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"signerNames": []any{signer}, "expression": expression, "decision": decision,
			"reason": "Policy" + decision, "message": name + " says " + decision},
	}}
}

// policyQueue is a queue of a storm of three kubelet-w requests, one pending
// client request of team-a, one of team-b, and an approved one of team-a.
func policyQueue(t *testing.T) []*certificatesv1.CertificateSigningRequest {
	items := pending(t, 3)
	mk := func(name, cn, org string) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1",
				CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC))},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: testfixtures.SubjectPEM(t, cn, org),
				SignerName: clientSigner, Username: cn},
		}
	}
	decided := mk("decided-a", "old", "team-a")
	decided.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
	return append(items, mk("client-a", "alice", "team-a"), mk("client-b", "bob", "team-b"), decided)
}

func threePolicies(gen uint64, teamADecision string) *csrpolicy.Compiled {
	return csrpolicy.CompileAll(gen, []*unstructured.Unstructured{
		policyObject("team-a", clientSigner, `request.subject.organizations.exists(o, o == "team-a")`, teamADecision),
		policyObject("kubelet-w", clientSigner, `request.username == "kubelet-w"`, "Approve"),
		policyObject("broken", clientSigner, `request.nosuch()`, "Deny"),
	})
}

func policyEnv(pol *csrpolicy.Compiled) Env {
	return Env{Now: time.Date(2026, 11, 21, 13, 0, 0, 0, time.UTC), Words: benchWords{}, PageSize: 50, Policies: pol,
		MayDecide: func(string) bool { return true }}
}

// A pending request's verdicts are worked out once per policy generation:
// the same slice while the generation stands, new ones after a change.
func TestVerdictsAreMemoizedPerGeneration(t *testing.T) {
	items := policyQueue(t)
	c := &Cache{}
	env := policyEnv(threePolicies(1, "Approve"))
	env.Cache = c
	res := Run(items, Query{State: Pending, Sort: SortAge}, env)
	var alice *Item
	for _, it := range res.Items {
		if it.CSR.Name == "client-a" {
			alice = it
		}
	}
	if alice == nil {
		t.Fatalf("client-a not in the pending tab: %d rows", len(res.Items))
	}
	first := alice.Verdicts()
	if len(first) != 2 || first[0].Policy != "broken" || first[0].Err == nil || first[1].Policy != "team-a" || first[1].Decision != csrpolicy.Approve {
		t.Fatalf("verdicts of client-a = %+v; want broken (error) and team-a (approve)", first)
	}
	if again := alice.Verdicts(); &again[0] != &first[0] {
		t.Error("the verdicts were evaluated again within one generation")
	}
	alice.v.policies = threePolicies(2, "Deny")
	if now := alice.Verdicts(); now[1].Decision != csrpolicy.Deny {
		t.Errorf("after a policy change, team-a says %v; want Deny", now[1].Decision)
	}
	if vs := alice.f.verdicts(alice.CSR, alice.v.checks, nil); vs != nil {
		t.Errorf("without policies, verdicts %+v", vs)
	}
}

// The policy filter keeps the pending requests with the verdict asked, the
// tab counts follow it, and a decided request never matches.
func TestPolicyFilter(t *testing.T) {
	items := policyQueue(t)
	env := policyEnv(threePolicies(1, "Approve"))
	for _, tc := range []struct {
		q    Query
		want int // pending requests kept
		rows int // rows (the storm one row)
	}{
		{Query{Policy: "team-a"}, 1, 1},
		{Query{Policy: "team-a", Verdict: VerdictApprove}, 1, 1},
		{Query{Policy: "team-a", Verdict: VerdictDeny}, 0, 0},
		{Query{Policy: "kubelet-w"}, 3, 1},
		{Query{Policy: "broken"}, 0, 0},
		{Query{Policy: "broken", Verdict: VerdictError}, 5, 3},
		{Query{Verdict: VerdictApprove}, 4, 2},
		{Query{Policy: "nosuch"}, 0, 0},
	} {
		res := Run(items, tc.q, env)
		if res.Matched != tc.want || res.Counts[Pending] != tc.want || res.Rows != tc.rows {
			t.Errorf("%+v: matched %d, pending count %d, rows %d; want %d, %d, %d", tc.q, res.Matched, res.Counts[Pending], res.Rows, tc.want, tc.want, tc.rows)
		}
		if res.Counts[Approved] != 0 || res.Counts[Issued] != 0 {
			t.Errorf("%+v: a decided request matched: %v", tc.q, res.Counts)
		}
	}
	if res := Run(items, Query{Policy: "team-a"}, policyEnv(nil)); res.Matched != 0 {
		t.Errorf("without policies the filter kept %d", res.Matched)
	}
}

// A storm's group row shows the verdicts of its newest request.
func TestStormRowShowsItsNewestVerdicts(t *testing.T) {
	items := policyQueue(t)
	res := Run(items, Query{State: Pending}, policyEnv(threePolicies(1, "Approve")))
	for _, it := range res.Items {
		if it.Storm == nil {
			continue
		}
		vs := it.Verdicts()
		if it.ChecksOf.CSR.Name != it.Storm.Newest().Name || len(vs) != 2 || vs[1].Policy != "kubelet-w" {
			t.Errorf("group row of %s shows %+v of %s", it.Storm.ID, vs, it.ChecksOf.CSR.Name)
		}
		return
	}
	t.Fatal("no group row")
}

func TestParsePolicyQuery(t *testing.T) {
	for in, want := range map[string][2]string{
		"policy=team-a&verdict=deny": {"team-a", "deny"},
		"policy=Team_A&verdict=yes":  {"", ""},
		"verdict=error":              {"", "error"},
	} {
		v, _ := url.ParseQuery(in)
		q := ParseQuery(v)
		if q.Policy != want[0] || q.Verdict != want[1] {
			t.Errorf("%s: policy %q verdict %q; want %q", in, q.Policy, q.Verdict, want)
		}
		if got := q.Values().Encode(); want[0] != "" && got != in {
			t.Errorf("%s: Values %s", in, got)
		}
	}
}
