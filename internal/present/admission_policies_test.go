package present

import (
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/views/model"
)

var policyNow = time.Unix(1700003600, 0)

// replicaPolicy is the shape of the upstream documentation's example: a
// parameterised limit on Deployment replicas, with every optional part set.
func replicaPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	ignore := admissionregistrationv1.Ignore
	forbidden := metav1.StatusReasonForbidden
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "replica-limit", Generation: 2, CreationTimestamp: metav1.NewTime(time.Unix(1700000000, 0))},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &ignore,
			ParamKind:     &admissionregistrationv1.ParamKind{APIVersion: "rules.example.com/v1", Kind: "ReplicaLimit"},
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				}}},
				ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{ResourceNames: []string{"coredns"},
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"*"}, Resources: []string{"pods"}},
					}}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "not-system", Expression: `!request.userInfo.username.startsWith("system:")`}},
			Variables:       []admissionregistrationv1.Variable{{Name: "max", Expression: "params.maxReplicas"}},
			Validations: []admissionregistrationv1.Validation{
				{Expression: "object.spec.replicas <= variables.max", Message: "too many replicas", Reason: &forbidden},
				{Expression: "object.spec.replicas > 0", MessageExpression: `"replicas must be positive, not " + string(object.spec.replicas)`},
			},
			AuditAnnotations: []admissionregistrationv1.AuditAnnotation{{Key: "high-replica-count", ValueExpression: `"replicas: " + string(object.spec.replicas)`}},
		},
		Status: admissionregistrationv1.ValidatingAdmissionPolicyStatus{
			ObservedGeneration: 2,
			TypeChecking: &admissionregistrationv1.TypeChecking{ExpressionWarnings: []admissionregistrationv1.ExpressionWarning{
				{FieldRef: "spec.validations[0].expression", Warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:15: found no matching overload"},
			}},
		},
	}
}

func binding(name, policy string, actions ...admissionregistrationv1.ValidationAction) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(time.Unix(1700000000, 0))},
		Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy, ValidationActions: actions},
	}
}

func insightByID(t *testing.T, p model.DetailPage, id string) model.Insight {
	t.Helper()
	for _, in := range p.Insights {
		if in.TestID == id {
			return in
		}
	}
	t.Fatalf("no insight %q in %d", id, len(p.Insights))
	return model.Insight{}
}

func richField(in model.Insight, label string) (model.Rich, bool) {
	for _, f := range in.Fields {
		if f.Label == label {
			return f.Value, true
		}
	}
	return model.Rich{}, false
}

func pageField(p model.DetailPage, label string) string {
	for _, f := range p.Fields {
		if f.Label == label {
			return f.Value
		}
	}
	return "<missing>"
}

func hasProblem(p model.DetailPage, id string) bool {
	for _, b := range p.Problems {
		if b.TestID == id {
			return true
		}
	}
	return false
}

func TestPolicyList(t *testing.T) {
	unset := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("p", 253), Generation: 1}}
	p := PolicyList([]*admissionregistrationv1.ValidatingAdmissionPolicy{replicaPolicy(), unset}, ListQuery{}, policyNow)
	if p.KindID != "validatingadmissionpolicies" || len(p.Rows) != 2 || len(p.Columns) != 6 {
		t.Fatalf("list %+v", p)
	}
	r := p.Rows[0]
	if r.Href != "/validatingadmissionpolicies/"+strings.Repeat("p", 253) || r.ID != "row-validatingadmissionpolicies-"+strings.Repeat("p", 253) {
		t.Errorf("first row (by name) %q %q", r.ID, r.Href)
	}
	// Unset failurePolicy is the API server's default, Fail; never checked is pending.
	if r.Cells[2].Text != "Fail" || len(r.Cells[2].Badges) != 1 || r.Cells[3].Text != "none" || r.Cells[4].Badges[0].Tone != model.TonePending {
		t.Errorf("defaults row %+v", r.Cells)
	}
	r = p.Rows[1]
	if r.Cells[1].Text != "2" || r.Cells[2].Text != "Ignore" || len(r.Cells[2].Badges) != 0 ||
		r.Cells[3].Text != "rules.example.com/v1 ReplicaLimit" || r.Cells[4].Badges[0].Text != "1 type warning" {
		t.Errorf("replica-limit row %+v", r.Cells)
	}
	if f := PolicyList([]*admissionregistrationv1.ValidatingAdmissionPolicy{replicaPolicy(), unset}, ListQuery{Filter: "warning"}, policyNow); len(f.Rows) != 1 || f.Rows[0].Name != "replica-limit" {
		t.Errorf("the filter matches badges: %+v", f.Rows)
	}
}

func TestPolicyDetail(t *testing.T) {
	pol := replicaPolicy()
	using := binding("limit-prod", "replica-limit", admissionregistrationv1.Deny)
	using.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "prod-limit", Namespace: "limits"}
	all := []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{using, binding("other", "another-policy", admissionregistrationv1.Warn)}
	p := PolicyDetail(pol, all, policyNow)

	if p.KindID != "validatingadmissionpolicies" || p.Name != "replica-limit" || p.Status.Text != "1 type warning" || p.Status.Tone != model.ToneWarning {
		t.Errorf("header %+v", p)
	}
	if pageField(p, "Failure policy") != "Ignore" || pageField(p, "Param kind") != "rules.example.com/v1 ReplicaLimit" || pageField(p, "Validations") != "2" {
		t.Errorf("fields %+v", p.Fields)
	}
	if !hasProblem(p, "finding-policy-type-warnings") || hasProblem(p, "finding-policy-unbound") {
		t.Errorf("problems %+v", p.Problems)
	}

	match := insightByID(t, p, "policy-match")
	if len(match.Table.Rows) != 2 {
		t.Fatalf("rules %+v", match.Table.Rows)
	}
	in, ex := match.Table.Rows[0].Cells, match.Table.Rows[1].Cells
	if in[0].Text != "Match" || in[1].Text != "CREATE, UPDATE" || in[2].Text != "apps" || in[4].Text != "deployments" || in[5].Text != "all" || in[6].Text != "*" {
		t.Errorf("match rule %+v", in)
	}
	if ex[0].Text != "Exclude" || ex[2].Text != `"" (core)` || ex[5].Text != "coredns" {
		t.Errorf("exclude rule %+v", ex)
	}
	if v, _ := richField(match, "Namespace selector"); v.Text != "env=prod" {
		t.Errorf("namespace selector %q", v.Text)
	}
	if v, _ := richField(match, "Object selector"); v.Text != "everything" {
		t.Errorf("object selector %q", v.Text)
	}
	if v, _ := richField(match, "Match policy"); v.Text != "Equivalent" {
		t.Errorf("match policy default %q", v.Text)
	}
	if v, _ := richField(match, "Match conditions"); len(v.Code) != 1 || v.Code[0].Label != "not-system" || !strings.Contains(v.Code[0].Code, "system:") {
		t.Errorf("match conditions %+v", v)
	}

	vals := insightByID(t, p, "policy-validations").Table.Rows
	if len(vals) != 2 {
		t.Fatalf("validations %+v", vals)
	}
	if vals[0].Cells[0].Code[0].Code != "object.spec.replicas <= variables.max" || vals[0].Cells[1].Text != "too many replicas" || vals[0].Cells[2].Text != "Forbidden" {
		t.Errorf("validation 1 %+v", vals[0].Cells)
	}
	if vals[1].Cells[1].Code[0].Label != "messageExpression" || vals[1].Cells[2].Text != "Invalid (default)" {
		t.Errorf("validation 2 %+v", vals[1].Cells)
	}
	if a := insightByID(t, p, "policy-audit-annotations").Table.Rows; len(a) != 1 || a[0].Cells[0].Text != "high-replica-count" {
		t.Errorf("audit annotations %+v", a)
	}
	if v := insightByID(t, p, "policy-variables").Table.Rows; len(v) != 1 || v[0].Cells[0].Text != "variables.max" {
		t.Errorf("variables %+v", v)
	}
	if w := insightByID(t, p, "policy-type-checking").Table.Rows; len(w) != 1 || w[0].Cells[0].Text != "spec.validations[0].expression" || !strings.Contains(w[0].Cells[1].Lines[0], "no matching overload") {
		t.Errorf("type checking %+v", w)
	}
	b := insightByID(t, p, "policy-bindings").Table.Rows
	if len(b) != 1 || b[0].Cells[0].Text != "limit-prod" || b[0].Cells[0].Href != "/validatingadmissionpolicybindings/limit-prod" ||
		b[0].Cells[1].Text != "Deny" || b[0].Cells[2].Text != "limits/prod-limit" {
		t.Errorf("bindings %+v", b)
	}
}

func TestPolicyDetailUnboundUncheckedAndUnknownBindings(t *testing.T) {
	pol := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "bare", Generation: 3},
		Status: admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: 2, TypeChecking: &admissionregistrationv1.TypeChecking{}}}
	p := PolicyDetail(pol, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, policyNow)
	if !hasProblem(p, "finding-policy-unbound") || p.Status.Text != "Not checked yet" {
		t.Errorf("a policy no binding uses is not enforced; generation 3 is not checked: %+v %+v", p.Problems, p.Status)
	}
	for _, id := range []string{"policy-audit-annotations", "policy-variables", "policy-type-checking"} {
		for _, in := range p.Insights {
			if in.TestID == id {
				t.Errorf("%s shown for a policy without any", id)
			}
		}
	}
	if m := insightByID(t, p, "policy-match"); m.Table.Empty != "Not set." {
		t.Errorf("unset matchConstraints: %+v", m)
	}
	// nil: the bindings could not be read; the page must not claim "not enforced".
	p = PolicyDetail(pol, nil, policyNow)
	if hasProblem(p, "finding-policy-unbound") || !strings.Contains(insightByID(t, p, "policy-bindings").Table.Empty, "could not be read") {
		t.Errorf("unknown bindings: %+v", p.Problems)
	}
	clean := replicaPolicy()
	clean.Status.TypeChecking.ExpressionWarnings = nil
	if s := PolicyDetail(clean, nil, policyNow).Status; s.Text != "Checked" || s.Tone != model.ToneOK {
		t.Errorf("checked clean: %+v", s)
	}
}

func TestBindingList(t *testing.T) {
	b := binding("limit-prod", "replica-limit", admissionregistrationv1.Warn, admissionregistrationv1.Audit)
	b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}
	d := binding("deny-all", "strict", admissionregistrationv1.Deny)
	p := BindingList([]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{d, b}, ListQuery{}, policyNow)
	if p.KindID != "validatingadmissionpolicybindings" || len(p.Rows) != 2 {
		t.Fatalf("list %+v", p)
	}
	r := p.Rows[1]
	if r.Href != "/validatingadmissionpolicybindings/limit-prod" || r.Cells[1].Text != "replica-limit" || r.Cells[2].Text != "Warn, Audit" ||
		len(r.Cells[2].Badges) != 0 || r.Cells[3].Text != "selector tier=gold" {
		t.Errorf("row %+v", r.Cells)
	}
	if c := p.Rows[0].Cells[2]; c.Text != "Deny" || len(c.Badges) != 1 || p.Rows[0].Cells[3].Text != "none" {
		t.Errorf("deny row %+v", p.Rows[0].Cells)
	}
}

func TestBindingDetail(t *testing.T) {
	deny := admissionregistrationv1.DenyAction
	b := binding("limit-prod", "replica-limit", admissionregistrationv1.Deny, admissionregistrationv1.Audit)
	b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "prod-limit", Namespace: "limits", ParameterNotFoundAction: &deny}
	b.Spec.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
	p := BindingDetail(b, PolicyLookup{Policy: replicaPolicy(), Known: true}, policyNow)

	if p.KindID != "validatingadmissionpolicybindings" || p.Status.Text != "Denies" || pageField(p, "Policy") != "replica-limit" ||
		pageField(p, "Validation actions") != "Deny, Audit" || pageField(p, "Params") != "limits/prod-limit" {
		t.Errorf("header %+v %+v", p.Status, p.Fields)
	}
	sum := insightByID(t, p, "binding-summary")
	if v, _ := richField(sum, "Policy"); v.Href != "/validatingadmissionpolicies/replica-limit" || len(v.Badges) != 1 || v.Badges[0].Text != "1 type warning" {
		t.Errorf("policy link %+v", v)
	}
	if v, _ := richField(sum, "When no param is found"); v.Text != "Deny" {
		t.Errorf("parameterNotFoundAction %+v", v)
	}
	if v, _ := richField(sum, "Param ref"); len(v.Badges) != 0 {
		t.Errorf("params of a policy with paramKind are used: %+v", v)
	}
	if v, _ := richField(insightByID(t, p, "binding-match"), "Namespace selector"); v.Text != "env=prod" {
		t.Errorf("match resources %+v", v)
	}
	if len(p.Problems) != 0 {
		t.Errorf("problems %+v", p.Problems)
	}
}

func TestBindingDetailPolicyMissingUnknownOrWithoutParams(t *testing.T) {
	b := binding("orphan", "no-such-policy", admissionregistrationv1.Warn)
	p := BindingDetail(b, PolicyLookup{Known: true}, policyNow)
	if !hasProblem(p, "finding-binding-no-policy") || p.Status.Text != "Reports only" {
		t.Errorf("missing policy: %+v %+v", p.Problems, p.Status)
	}
	if v, _ := richField(insightByID(t, p, "binding-summary"), "Policy"); v.Href != "" || v.Badges[0].Text != "Not found" {
		t.Errorf("a missing policy is not linked: %+v", v)
	}
	if m := insightByID(t, p, "binding-match"); m.Table.Empty != "Not set." {
		t.Errorf("unset matchResources %+v", m.Table)
	}

	p = BindingDetail(b, PolicyLookup{}, policyNow)
	if hasProblem(p, "finding-binding-no-policy") {
		t.Error("an unreadable policy is not reported missing")
	}
	if v, _ := richField(insightByID(t, p, "binding-summary"), "Policy"); v.Href == "" || v.Badges[0].Text != "Unknown" {
		t.Errorf("unknown policy: %+v", v)
	}

	// A paramKind policy bound without paramRef sees null params; a paramRef
	// to a policy without paramKind is ignored (policy_dispatcher.go).
	p = BindingDetail(b, PolicyLookup{Policy: replicaPolicy(), Known: true}, policyNow)
	if v, _ := richField(insightByID(t, p, "binding-summary"), "Param ref"); len(v.Badges) != 1 || v.Badges[0].Text != "params is null" {
		t.Errorf("no paramRef: %+v", v)
	}
	b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "x"}
	noKind := replicaPolicy()
	noKind.Spec.ParamKind = nil
	p = BindingDetail(b, PolicyLookup{Policy: noKind, Known: true}, policyNow)
	sum := insightByID(t, p, "binding-summary")
	if v, _ := richField(sum, "Param ref"); len(v.Badges) != 1 || v.Badges[0].Text != "Ignored" {
		t.Errorf("ignored paramRef: %+v", v)
	}
	if v, _ := richField(sum, "When no param is found"); v.Text != "Allow (not set)" {
		t.Errorf("unset parameterNotFoundAction: %+v", v)
	}
	if s := bindingStatus(nil); s.Tone != model.ToneError {
		t.Errorf("no actions: %+v", s)
	}
}
