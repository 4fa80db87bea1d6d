package present

import (
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// twoRuleForm is a form as a person fills it: two rules, every row kind.
func twoRuleForm() model.FlowSchemaForm {
	return model.FlowSchemaForm{
		Name: "batch", Precedence: "900", PriorityLevel: "workload-low", Distinguisher: "ByUser",
		Rules: []model.FormRule{
			{
				Subjects: []model.FormSubject{
					{Kind: "User", Name: "alice"},
					{Kind: "ServiceAccount", Namespace: "ci", Name: "*"},
				},
				ResourceRules: []model.FormResourceRule{
					{Verbs: []string{"get", "list"}, APIGroups: `"", apps`, Resources: "pods, deployments/scale", Namespaces: "ci, build"},
				},
			},
			{
				Subjects:         []model.FormSubject{{Kind: "Group", Name: "system:authenticated"}},
				ResourceRules:    []model.FormResourceRule{{Verbs: []string{"*"}, APIGroups: "*", Resources: "nodes", ClusterScope: true}},
				NonResourceRules: []model.FormNonResourceRule{{Verbs: []string{"get"}, URLs: "/healthz, /apis/*"}},
			},
		},
	}
}

func TestParseFormOp(t *testing.T) {
	cases := []struct {
		in   string
		want FormOp
	}{
		{"preview", FormOp{Kind: OpPreview}},
		{"save", FormOp{Kind: OpSave}},
		{"rebase", FormOp{Kind: OpRebase}},
		{"add-rule", FormOp{Kind: OpAddRule}},
		{"remove-rule:2", FormOp{Kind: OpRemoveRule, Rule: 2}},
		{"add-subject:0", FormOp{Kind: OpAddSubject}},
		{"remove-subject:1:3", FormOp{Kind: OpRemoveSubject, Rule: 1, Row: 3}},
		{"add-resource:4", FormOp{Kind: OpAddResource, Rule: 4}},
		{"remove-resource:0:1", FormOp{Kind: OpRemoveResource, Row: 1}},
		{"add-nonresource:1", FormOp{Kind: OpAddNonResource, Rule: 1}},
		{"remove-nonresource:1:0", FormOp{Kind: OpRemoveNonResource, Rule: 1}},
		// Malformed: wrong arity, signs, leading zeros, huge numbers, unknown.
		{"", FormOp{}},
		{"add-rule:1", FormOp{}},
		{"remove-rule", FormOp{}},
		{"remove-subject:1", FormOp{}},
		{"add-subject:-1", FormOp{}},
		{"add-subject:01", FormOp{}},
		{"add-subject:1000", FormOp{}},
		{"add-subject:+1", FormOp{}},
		{"delete-everything", FormOp{}},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := ParseFormOp(c.in); got != c.want {
				t.Errorf("ParseFormOp(%q) = %+v, want %+v", c.in, got, c.want)
			}
		})
	}
	if (FormOp{Kind: OpPreview}).Edits() || (FormOp{Kind: OpSave}).Edits() || (FormOp{}).Edits() || !(FormOp{Kind: OpAddRule}).Edits() {
		t.Error("Edits: only add and remove ops edit the form")
	}
	if got := OpValue(OpRemoveSubject, 1, 2); ParseFormOp(got) != (FormOp{Kind: OpRemoveSubject, Rule: 1, Row: 2}) {
		t.Errorf("OpValue/ParseFormOp do not round-trip: %q", got)
	}
}

func TestParseFlowSchemaFormRoundTrip(t *testing.T) {
	want := twoRuleForm()
	v := FlowSchemaFormValues(want)
	v.Set("op", "preview")
	got, op := ParseFlowSchemaForm(v)
	if op.Kind != OpPreview {
		t.Errorf("op = %+v", op)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
}

func TestParseFlowSchemaForm(t *testing.T) {
	cases := []struct {
		name  string
		query string
		check func(t *testing.T, f model.FlowSchemaForm)
	}{
		{"gaps are renumbered in index order", "r7.rule=1&r2.s5.name=b&r2.s1.name=a&r7.nr3.urls=/x&r7.nr0.urls=/w", func(t *testing.T, f model.FlowSchemaForm) {
			if len(f.Rules) != 2 || len(f.Rules[0].Subjects) != 2 || f.Rules[0].Subjects[0].Name != "a" || f.Rules[0].Subjects[1].Name != "b" {
				t.Fatalf("%+v", f.Rules)
			}
			if urls := f.Rules[1].NonResourceRules; len(urls) != 2 || urls[0].URLs != "/w" || urls[1].URLs != "/x" {
				t.Fatalf("%+v", urls)
			}
		}},
		{"a rule without rows survives", "r0.rule=1", func(t *testing.T, f model.FlowSchemaForm) {
			if len(f.Rules) != 1 || len(f.Rules[0].Subjects)+len(f.Rules[0].ResourceRules)+len(f.Rules[0].NonResourceRules) != 0 {
				t.Fatalf("%+v", f.Rules)
			}
		}},
		{"values are trimmed; unknown kinds and distinguishers are dropped", "name=+x+&precedence=+5+&distinguisher=ByPod&r0.s0.kind=Robot&r0.s0.name=+bob+", func(t *testing.T, f model.FlowSchemaForm) {
			if f.Name != "x" || f.Precedence != "5" || f.Distinguisher != "" || f.Rules[0].Subjects[0] != (model.FormSubject{Kind: "User", Name: "bob"}) {
				t.Fatalf("%+v", f)
			}
		}},
		{"verbs keep the offered ones in order", "r0.rr0.verbs=watch&r0.rr0.verbs=nuke&r0.rr0.verbs=*&r0.rr0.verbs=get", func(t *testing.T, f model.FlowSchemaForm) {
			if got := f.Rules[0].ResourceRules[0].Verbs; !slices.Equal(got, []string{"*", "get", "watch"}) {
				t.Fatalf("%q", got)
			}
		}},
		{"malformed keys are ignored", "r.s0.name=a&rx.rule=1&r01.rule=1&r1000.rule=1&r0.q0.name=a&r0.s.name=a&r0.s-1.name=a&r0&rule=1", func(t *testing.T, f model.FlowSchemaForm) {
			if len(f.Rules) != 1 || len(f.Rules[0].Subjects) != 0 {
				t.Fatalf("%+v", f.Rules)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := url.ParseQuery(c.query)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := ParseFlowSchemaForm(v)
			c.check(t, f)
		})
	}
}

func TestParseFlowSchemaFormBoundsRows(t *testing.T) {
	v := url.Values{}
	for i := range 200 {
		v.Set("r"+strconv.Itoa(i)+".rule", "1")
		v.Set("r0.s"+strconv.Itoa(i)+".name", "u")
	}
	f, _ := ParseFlowSchemaForm(v)
	if len(f.Rules) > formMaxRows || len(f.Rules[0].Subjects) > formMaxRows {
		t.Fatalf("%d rules, %d subjects: over the bound %d", len(f.Rules), len(f.Rules[0].Subjects), formMaxRows)
	}
}

func TestApplyFormOp(t *testing.T) {
	base := twoRuleForm()
	cases := []struct {
		op    FormOp
		check func(f model.FlowSchemaForm) bool
		focus string
	}{
		{FormOp{Kind: OpAddRule}, func(f model.FlowSchemaForm) bool {
			return len(f.Rules) == 3 && len(f.Rules[2].Subjects) == 1 && len(f.Rules[2].ResourceRules) == 1
		}, "r2.s0"},
		{FormOp{Kind: OpRemoveRule, Rule: 0}, func(f model.FlowSchemaForm) bool {
			return len(f.Rules) == 1 && f.Rules[0].Subjects[0].Name == "system:authenticated"
		}, ""},
		{FormOp{Kind: OpAddSubject, Rule: 1}, func(f model.FlowSchemaForm) bool {
			return len(f.Rules[1].Subjects) == 2 && f.Rules[1].Subjects[1] == model.FormSubject{Kind: "User"}
		}, "r1.s1"},
		{FormOp{Kind: OpRemoveSubject, Rule: 0, Row: 0}, func(f model.FlowSchemaForm) bool {
			return len(f.Rules[0].Subjects) == 1 && f.Rules[0].Subjects[0].Namespace == "ci"
		}, ""},
		{FormOp{Kind: OpAddResource, Rule: 0}, func(f model.FlowSchemaForm) bool { return len(f.Rules[0].ResourceRules) == 2 }, "r0.rr1"},
		{FormOp{Kind: OpRemoveResource, Rule: 1, Row: 0}, func(f model.FlowSchemaForm) bool { return len(f.Rules[1].ResourceRules) == 0 }, ""},
		{FormOp{Kind: OpAddNonResource, Rule: 0}, func(f model.FlowSchemaForm) bool { return len(f.Rules[0].NonResourceRules) == 1 }, "r0.nr0"},
		{FormOp{Kind: OpRemoveNonResource, Rule: 1, Row: 0}, func(f model.FlowSchemaForm) bool { return len(f.Rules[1].NonResourceRules) == 0 }, ""},
		// Out of range: nothing changes.
		{FormOp{Kind: OpRemoveRule, Rule: 5}, func(f model.FlowSchemaForm) bool { return reflect.DeepEqual(f, twoRuleForm()) }, ""},
		{FormOp{Kind: OpRemoveSubject, Rule: 0, Row: 9}, func(f model.FlowSchemaForm) bool { return reflect.DeepEqual(f, twoRuleForm()) }, ""},
		{FormOp{Kind: OpAddSubject, Rule: 9}, func(f model.FlowSchemaForm) bool { return reflect.DeepEqual(f, twoRuleForm()) }, ""},
	}
	for _, c := range cases {
		t.Run(OpValue(c.op.Kind, c.op.Rule, c.op.Row), func(t *testing.T) {
			got := ApplyFormOp(base, c.op)
			if !c.check(got) {
				t.Errorf("after %+v: %+v", c.op, got.Rules)
			}
			if k := AddedRowKey(got, c.op); k != c.focus {
				t.Errorf("AddedRowKey = %q, want %q", k, c.focus)
			}
			if !reflect.DeepEqual(base, twoRuleForm()) {
				t.Fatal("ApplyFormOp changed the form it was given")
			}
		})
	}
}

func TestFlowSchemaSpec(t *testing.T) {
	spec, errs := FlowSchemaSpec(twoRuleForm())
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
	back := FlowSchemaFormOf(&flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Spec: spec}, []string{"workload-low"})
	if !reflect.DeepEqual(back, twoRuleForm()) {
		t.Errorf("FlowSchemaFormOf:\n got %+v\nwant %+v", back, twoRuleForm())
	}

	for _, c := range []struct{ prec, want string }{{"", "Give the matching precedence"}, {"ten", `"ten" is not a whole number`}, {"99999999999", "not a whole number"}, {"1.5", "not a whole number"}} {
		f := twoRuleForm()
		f.Precedence = c.prec
		_, errs := FlowSchemaSpec(f)
		if len(errs[FormPrecedence]) != 1 || !strings.Contains(errs[FormPrecedence][0], c.want) {
			t.Errorf("precedence %q: errors %v", c.prec, errs)
		}
	}
	// Out of range numbers go to the API server, which judges them.
	for _, prec := range []string{"0", "10001", "-3"} {
		f := twoRuleForm()
		f.Precedence = prec
		if _, errs := FlowSchemaSpec(f); errs != nil {
			t.Errorf("precedence %q refused locally: %v", prec, errs)
		}
	}
	f := twoRuleForm()
	f.PriorityLevel, f.PriorityTyped = model.PriorityLevelOther, "my-level"
	if spec, _ := FlowSchemaSpec(f); spec.PriorityLevelConfiguration.Name != "my-level" {
		t.Errorf("typed priority level: %q", spec.PriorityLevelConfiguration.Name)
	}
	if back := FlowSchemaFormOf(&flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "gone"}}}, []string{"a"}); back.PriorityLevel != model.PriorityLevelOther || back.PriorityTyped != "gone" {
		t.Errorf("a missing level is shown typed: %+v", back)
	}
}

func TestFlowSchemaFormHints(t *testing.T) {
	hint := func(mut func(f *model.FlowSchemaForm), levels []string) map[string][]string {
		f := twoRuleForm()
		mut(&f)
		return FlowSchemaFormHints(f, levels)
	}
	if h := hint(func(*model.FlowSchemaForm) {}, []string{"workload-low"}); len(h) != 0 {
		t.Errorf("a valid form has hints: %v", h)
	}
	cases := []struct {
		name   string
		mut    func(f *model.FlowSchemaForm)
		key    string
		substr string
	}{
		{"precedence 0", func(f *model.FlowSchemaForm) { f.Precedence = "0" }, "precedence", "1 to 10000"},
		{"precedence 10001", func(f *model.FlowSchemaForm) { f.Precedence = "10001" }, "precedence", "1 to 10000"},
		{"precedence 1", func(f *model.FlowSchemaForm) { f.Precedence = "1" }, "precedence", "exempt"},
		{"missing level", func(f *model.FlowSchemaForm) { f.PriorityLevel = "nope" }, "prioritylevel", "Dangling"},
		{"no level", func(f *model.FlowSchemaForm) { f.PriorityLevel, f.PriorityTyped = model.PriorityLevelOther, "" }, "prioritylevel", "Name a priority level"},
		{"no rules", func(f *model.FlowSchemaForm) { f.Rules = nil }, "rules", "matches no request"},
		{"no subjects", func(f *model.FlowSchemaForm) { f.Rules[0].Subjects = nil }, "r0.subjects", "at least one subject"},
		{"no rows", func(f *model.FlowSchemaForm) { f.Rules[1].ResourceRules, f.Rules[1].NonResourceRules = nil, nil }, "r1", "at least one resource rule or non-resource rule"},
		{"subject without name", func(f *model.FlowSchemaForm) { f.Rules[0].Subjects[1].Name = "" }, "r0.s1.name", "or * for all"},
		{"service account without namespace", func(f *model.FlowSchemaForm) { f.Rules[0].Subjects[1].Namespace = "" }, "r0.s1.namespace", "namespace"},
		{"* with other verbs", func(f *model.FlowSchemaForm) { f.Rules[1].ResourceRules[0].Verbs = []string{"*", "get"} }, "r1.rr0.verbs", "* must be the only verb"},
		{"no verbs", func(f *model.FlowSchemaForm) { f.Rules[0].ResourceRules[0].Verbs = nil }, "r0.rr0.verbs", "at least one verb"},
		{"* with other groups", func(f *model.FlowSchemaForm) { f.Rules[0].ResourceRules[0].APIGroups = "*, apps" }, "r0.rr0.apigroups", "* must be the only API group"},
		{"no resources", func(f *model.FlowSchemaForm) { f.Rules[0].ResourceRules[0].Resources = " , " }, "r0.rr0.resources", "at least one resource"},
		{"neither scope nor namespaces", func(f *model.FlowSchemaForm) { f.Rules[0].ResourceRules[0].Namespaces = "" }, "r0.rr0.namespaces", "cluster scope"},
		{"* with other namespaces", func(f *model.FlowSchemaForm) { f.Rules[0].ResourceRules[0].Namespaces = "a, *" }, "r0.rr0.namespaces", "only namespace"},
		{"relative URL", func(f *model.FlowSchemaForm) { f.Rules[1].NonResourceRules[0].URLs = "healthz" }, "r1.nr0.urls", "must start with /"},
		{"inner wildcard", func(f *model.FlowSchemaForm) { f.Rules[1].NonResourceRules[0].URLs = "/api*" }, "r1.nr0.urls", "prefix rule"},
		{"double slash", func(f *model.FlowSchemaForm) { f.Rules[1].NonResourceRules[0].URLs = "/a//b" }, "r1.nr0.urls", "//"},
		{"* with other URLs", func(f *model.FlowSchemaForm) { f.Rules[1].NonResourceRules[0].URLs = "*, /x" }, "r1.nr0.urls", "only URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := hint(c.mut, []string{"workload-low"})
			if !strings.Contains(strings.Join(h[c.key], " "), c.substr) {
				t.Errorf("hints[%q] = %q, want one containing %q (all: %v)", c.key, h[c.key], c.substr, h)
			}
		})
	}
	blank := func(f *model.FlowSchemaForm) {
		f.Rules[0].Subjects = append(f.Rules[0].Subjects, model.FormSubject{Kind: "User"})
		f.Rules[0].ResourceRules = append(f.Rules[0].ResourceRules, model.FormResourceRule{})
		f.Rules[0].NonResourceRules = append(f.Rules[0].NonResourceRules, model.FormNonResourceRule{})
	}
	if h := hint(blank, []string{"workload-low"}); len(h) != 0 {
		t.Errorf("rows not filled in yet have hints: %v", h)
	}
	if h := hint(func(f *model.FlowSchemaForm) { f.PriorityLevel = "nope" }, nil); len(h["prioritylevel"]) != 0 {
		t.Errorf("levels unknown, yet a hint: %v", h)
	}
}

func TestFormFieldKey(t *testing.T) {
	cases := map[string]string{
		"metadata.name":                                        "name",
		"spec.matchingPrecedence":                              "precedence",
		"spec.priorityLevelConfiguration.name":                 "prioritylevel",
		"spec.distinguisherMethod.type":                        "distinguisher",
		"spec.rules":                                           "rules",
		"spec.rules[2]":                                        "r2",
		"spec.rules[0].subjects":                               "r0.subjects",
		"spec.rules[0].subjects[1].kind":                       "r0.s1.kind",
		"spec.rules[0].subjects[1].user.name":                  "r0.s1.name",
		"spec.rules[0].subjects[1].group.name":                 "r0.s1.name",
		"spec.rules[0].subjects[3].serviceAccount":             "r0.s3.name",
		"spec.rules[0].subjects[3].serviceAccount.namespace":   "r0.s3.namespace",
		"spec.rules[1].resourceRules[0].verbs":                 "r1.rr0.verbs",
		"spec.rules[1].resourceRules[0].apiGroups":             "r1.rr0.apigroups",
		"spec.rules[1].resourceRules[2].resources":             "r1.rr2.resources",
		"spec.rules[1].resourceRules[0].namespaces":            "r1.rr0.namespaces",
		"spec.rules[1].resourceRules[0].namespaces[3]":         "r1.rr0.namespaces",
		"spec.rules[0].nonResourceRules[1].verbs":              "r0.nr1.verbs",
		"spec.rules[0].nonResourceRules[1].nonResourceURLs":    "r0.nr1.urls",
		"spec.rules[0].nonResourceRules[1].nonResourceURLs[0]": "r0.nr1.urls",
		"spec.rules[x]":                                        "",
		"metadata.label":                                       "",
		"spec.other":                                           "",
		"":                                                     "",
	}
	for in, want := range cases {
		if got := FormFieldKey(in); got != want {
			t.Errorf("FormFieldKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFlowSchemaObject(t *testing.T) {
	spec, _ := FlowSchemaSpec(twoRuleForm())
	created, err := apf.FormObject(nil, "flowcontrol.apiserver.k8s.io/v1beta3", "batch", spec)
	if err != nil {
		t.Fatal(err)
	}
	if created.GetAPIVersion() != "flowcontrol.apiserver.k8s.io/v1beta3" || created.GetKind() != "FlowSchema" || created.GetName() != "batch" {
		t.Errorf("created: %v", created.Object)
	}
	if back, err := FlowSchemaOf(created); err != nil || !reflect.DeepEqual(back.Spec, spec) {
		t.Errorf("created spec %+v, err %v", back, err)
	}

	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
		"metadata": map[string]any{"name": "batch", "labels": map[string]any{"team": "a"}, "annotations": map[string]any{"note": "keep"}, "resourceVersion": "7"},
		"spec": map[string]any{
			"matchingPrecedence": int64(5), "futureField": "kept",
			"distinguisherMethod": map[string]any{"type": "ByNamespace"},
			"rules":               []any{map[string]any{"subjects": []any{}}},
		},
		"status": map[string]any{"conditions": []any{}},
	}}
	f := twoRuleForm()
	f.Rules, f.Distinguisher = nil, ""
	spec, _ = FlowSchemaSpec(f)
	obj, err := apf.FormObject(live, "ignored", "batch", spec)
	if err != nil {
		t.Fatal(err)
	}
	s := obj.Object["spec"].(map[string]any)
	if s["futureField"] != "kept" || obj.GetLabels()["team"] != "a" || obj.GetAnnotations()["note"] != "keep" {
		t.Errorf("unmodeled fields lost: %v", obj.Object)
	}
	if _, ok := s["rules"]; ok {
		t.Errorf("emptied rules kept: %v", s)
	}
	if _, ok := s["distinguisherMethod"]; ok {
		t.Errorf("distinguisher none kept the live one: %v", s)
	}
	if _, ok := obj.Object["status"]; ok {
		t.Error("status sent")
	}
	if live.Object["spec"].(map[string]any)["rules"] == nil {
		t.Error("the live object was changed")
	}
	if got := UnmodeledSpecFields(live); !slices.Equal(got, []string{"spec.futureField"}) {
		t.Errorf("UnmodeledSpecFields = %q", got)
	}
}

func TestDanglingCondition(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Dangling", "status": "True", "message": "no such level"}}},
	}}
	if msg, ok := DanglingCondition(obj); !ok || msg != "no such level" {
		t.Errorf("DanglingCondition = %q, %v", msg, ok)
	}
	obj.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Dangling", "status": "False"}}}
	if _, ok := DanglingCondition(obj); ok {
		t.Error("Dangling=False reported")
	}
}

// BenchmarkFlowSchemaForm is one form post's pure work: decode, apply the op,
// build the spec and the hints, for a two-rule form and for the largest form
// the decoder keeps (64 rules of 3 rows each).
func BenchmarkFlowSchemaForm(b *testing.B) {
	big := twoRuleForm()
	for len(big.Rules) < formMaxRows {
		big.Rules = append(big.Rules, twoRuleForm().Rules[1])
	}
	for _, c := range []struct {
		name string
		form model.FlowSchemaForm
	}{{"2-rules", twoRuleForm()}, {"64-rules", big}} {
		body := withOpValue(FlowSchemaFormValues(c.form), "add-subject:1").Encode()
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v, _ := url.ParseQuery(body)
				f, op := ParseFlowSchemaForm(v)
				f = ApplyFormOp(f, op)
				_, _ = FlowSchemaSpec(f)
				_ = FlowSchemaFormHints(f, []string{"workload-low"})
			}
		})
	}
}

func withOpValue(v url.Values, op string) url.Values {
	v.Set(FormOpField, op)
	return v
}
