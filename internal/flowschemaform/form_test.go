package flowschemaform

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/flowschemaform/form"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// twoRuleForm is a form as a person fills it: two rules, every row kind.
var twoRuleForm = testfixtures.TwoRuleFlowSchemaForm

func TestSpec(t *testing.T) {
	spec, errs := Spec(twoRuleForm())
	if errs != nil {
		t.Fatalf("errors: %v", errs)
	}
	want := flowcontrolv1.FlowSchemaSpec{
		MatchingPrecedence:         900,
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"},
		DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{
			{
				Subjects: []flowcontrolv1.Subject{
					{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "alice"}},
					{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: "ci", Name: "*"}},
				},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"get", "list"}, APIGroups: []string{"", "apps"}, Resources: []string{"pods", "deployments/scale"}, Namespaces: []string{"ci", "build"},
				}},
			},
			{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: "system:authenticated"}}},
				ResourceRules:    []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"nodes"}, ClusterScope: true}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/apis/*"}}},
			},
		},
	}
	if !reflect.DeepEqual(spec, want) {
		t.Errorf("spec:\n got %+v\nwant %+v", spec, want)
	}

	// Back to the form: the same values (the lists re-joined as typed).
	back := FormOf(&flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Spec: spec}, []string{"workload-low"})
	if !reflect.DeepEqual(back, twoRuleForm()) {
		t.Errorf("FlowSchemaFormOf:\n got %+v\nwant %+v", back, twoRuleForm())
	}

	for _, c := range []struct{ prec, want string }{{"", "Give the matching precedence"}, {"ten", `"ten" is not a whole number`}, {"99999999999", "not a whole number"}, {"1.5", "not a whole number"}} {
		f := twoRuleForm()
		f.Precedence = c.prec
		_, errs := Spec(f)
		if len(errs[form.FieldPrecedence]) != 1 || !strings.Contains(errs[form.FieldPrecedence][0], c.want) {
			t.Errorf("precedence %q: errors %v", c.prec, errs)
		}
	}
	// Out of range numbers go to the API server, which judges them.
	for _, prec := range []string{"0", "10001", "-3"} {
		f := twoRuleForm()
		f.Precedence = prec
		if _, errs := Spec(f); errs != nil {
			t.Errorf("precedence %q refused locally: %v", prec, errs)
		}
	}
	f := twoRuleForm()
	f.PriorityLevel, f.PriorityTyped = form.PriorityLevelOther, "my-level"
	if spec, _ := Spec(f); spec.PriorityLevelConfiguration.Name != "my-level" {
		t.Errorf("typed priority level: %q", spec.PriorityLevelConfiguration.Name)
	}
	if back := FormOf(&flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "gone"}}}, []string{"a"}); back.PriorityLevel != form.PriorityLevelOther || back.PriorityTyped != "gone" {
		t.Errorf("a missing level is shown typed: %+v", back)
	}
}

func TestHints(t *testing.T) {
	hint := func(mut func(f *form.Form), levels []string) map[string][]string {
		f := twoRuleForm()
		mut(&f)
		return Hints(f, levels)
	}
	if h := hint(func(*form.Form) {}, []string{"workload-low"}); len(h) != 0 {
		t.Errorf("a valid form has hints: %v", h)
	}
	cases := []struct {
		name   string
		mut    func(f *form.Form)
		key    string
		substr string
	}{
		{"precedence 0", func(f *form.Form) { f.Precedence = "0" }, "precedence", "1 to 10000"},
		{"precedence 10001", func(f *form.Form) { f.Precedence = "10001" }, "precedence", "1 to 10000"},
		{"precedence 1", func(f *form.Form) { f.Precedence = "1" }, "precedence", "exempt"},
		{"missing level", func(f *form.Form) { f.PriorityLevel = "nope" }, "prioritylevel", "Dangling"},
		{"no level", func(f *form.Form) { f.PriorityLevel, f.PriorityTyped = form.PriorityLevelOther, "" }, "prioritylevel", "Name a priority level"},
		{"no rules", func(f *form.Form) { f.Rules = nil }, "rules", "matches no request"},
		{"no subjects", func(f *form.Form) { f.Rules[0].Subjects = nil }, "r0.subjects", "at least one subject"},
		{"no rows", func(f *form.Form) { f.Rules[1].ResourceRules, f.Rules[1].NonResourceRules = nil, nil }, "r1", "at least one resource rule or non-resource rule"},
		{"subject without name", func(f *form.Form) { f.Rules[0].Subjects[1].Name = "" }, "r0.s1.name", "or * for all"},
		{"service account without namespace", func(f *form.Form) { f.Rules[0].Subjects[1].Namespace = "" }, "r0.s1.namespace", "namespace"},
		{"* with other verbs", func(f *form.Form) { f.Rules[1].ResourceRules[0].Verbs = []string{"*", "get"} }, "r1.rr0.verbs", "* must be the only verb"},
		{"no verbs", func(f *form.Form) { f.Rules[0].ResourceRules[0].Verbs = nil }, "r0.rr0.verbs", "at least one verb"},
		{"* with other groups", func(f *form.Form) { f.Rules[0].ResourceRules[0].APIGroups = "*, apps" }, "r0.rr0.apigroups", "* must be the only API group"},
		{"no resources", func(f *form.Form) { f.Rules[0].ResourceRules[0].Resources = " , " }, "r0.rr0.resources", "at least one resource"},
		{"neither scope nor namespaces", func(f *form.Form) { f.Rules[0].ResourceRules[0].Namespaces = "" }, "r0.rr0.namespaces", "cluster scope"},
		{"* with other namespaces", func(f *form.Form) { f.Rules[0].ResourceRules[0].Namespaces = "a, *" }, "r0.rr0.namespaces", "only namespace"},
		{"relative URL", func(f *form.Form) { f.Rules[1].NonResourceRules[0].URLs = "healthz" }, "r1.nr0.urls", "must start with /"},
		{"inner wildcard", func(f *form.Form) { f.Rules[1].NonResourceRules[0].URLs = "/api*" }, "r1.nr0.urls", "prefix rule"},
		{"double slash", func(f *form.Form) { f.Rules[1].NonResourceRules[0].URLs = "/a//b" }, "r1.nr0.urls", "//"},
		{"* with other URLs", func(f *form.Form) { f.Rules[1].NonResourceRules[0].URLs = "*, /x" }, "r1.nr0.urls", "only URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := hint(c.mut, []string{"workload-low"})
			if !strings.Contains(strings.Join(h[c.key], " "), c.substr) {
				t.Errorf("hints[%q] = %q, want one containing %q (all: %v)", c.key, h[c.key], c.substr, h)
			}
		})
	}
	blank := func(f *form.Form) {
		f.Rules[0].Subjects = append(f.Rules[0].Subjects, form.Subject{Kind: "User"})
		f.Rules[0].ResourceRules = append(f.Rules[0].ResourceRules, form.ResourceRule{})
		f.Rules[0].NonResourceRules = append(f.Rules[0].NonResourceRules, form.NonResourceRule{})
	}
	if h := hint(blank, []string{"workload-low"}); len(h) != 0 {
		t.Errorf("rows not filled in yet have hints: %v", h)
	}
	if h := hint(func(f *form.Form) { f.PriorityLevel = "nope" }, nil); len(h["prioritylevel"]) != 0 {
		t.Errorf("levels unknown, yet a hint: %v", h)
	}
}

// BenchmarkFlowSchemaForm is one form post's pure work: decode, apply the op,
// build the spec and the hints, for a two-rule form and for the largest form
// the decoder keeps (64 rules of 3 rows each).
func BenchmarkFlowSchemaForm(b *testing.B) {
	big := twoRuleForm()
	for len(big.Rules) < form.MaxRows {
		big.Rules = append(big.Rules, twoRuleForm().Rules[1])
	}
	for _, c := range []struct {
		name string
		form form.Form
	}{{"2-rules", twoRuleForm()}, {"64-rules", big}} {
		body := withOpValue(form.Values(c.form), "add-subject:1").Encode()
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v, _ := url.ParseQuery(body)
				f, op := form.Parse(v)
				f = form.ApplyOp(f, op)
				_, _ = Spec(f)
				_ = Hints(f, []string{"workload-low"})
			}
		})
	}
}

func withOpValue(v url.Values, op string) url.Values {
	v.Set(form.FieldOp, op)
	return v
}
