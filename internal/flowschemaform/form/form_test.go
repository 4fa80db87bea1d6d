package form

import (
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// twoRuleForm is a form as a person fills it: two rules, every row kind.
func twoRuleForm() Form {
	return Form{
		Name: "batch", Precedence: "900", PriorityLevel: "workload-low", Distinguisher: "ByUser",
		Rules: []Rule{
			{
				Subjects: []Subject{
					{Kind: "User", Name: "alice"},
					{Kind: "ServiceAccount", Namespace: "ci", Name: "*"},
				},
				ResourceRules: []ResourceRule{
					{Verbs: []string{"get", "list"}, APIGroups: `"", apps`, Resources: "pods, deployments/scale", Namespaces: "ci, build"},
				},
			},
			{
				Subjects:         []Subject{{Kind: "Group", Name: "system:authenticated"}},
				ResourceRules:    []ResourceRule{{Verbs: []string{"*"}, APIGroups: "*", Resources: "nodes", ClusterScope: true}},
				NonResourceRules: []NonResourceRule{{Verbs: []string{"get"}, URLs: "/healthz, /apis/*"}},
			},
		},
	}
}

func TestParseFormOp(t *testing.T) {
	cases := []struct {
		in   string
		want Op
	}{
		{"preview", Op{Kind: OpPreview}},
		{"save", Op{Kind: OpSave}},
		{"rebase", Op{Kind: OpRebase}},
		{"add-rule", Op{Kind: OpAddRule}},
		{"remove-rule:2", Op{Kind: OpRemoveRule, Rule: 2}},
		{"add-subject:0", Op{Kind: OpAddSubject}},
		{"remove-subject:1:3", Op{Kind: OpRemoveSubject, Rule: 1, Row: 3}},
		{"add-resource:4", Op{Kind: OpAddResource, Rule: 4}},
		{"remove-resource:0:1", Op{Kind: OpRemoveResource, Row: 1}},
		{"add-nonresource:1", Op{Kind: OpAddNonResource, Rule: 1}},
		{"remove-nonresource:1:0", Op{Kind: OpRemoveNonResource, Rule: 1}},
		// Malformed: wrong arity, signs, leading zeros, huge numbers, unknown.
		{"", Op{}},
		{"add-rule:1", Op{}},
		{"remove-rule", Op{}},
		{"remove-subject:1", Op{}},
		{"add-subject:-1", Op{}},
		{"add-subject:01", Op{}},
		{"add-subject:1000", Op{}},
		{"add-subject:+1", Op{}},
		{"delete-everything", Op{}},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := ParseOp(c.in); got != c.want {
				t.Errorf("ParseOp(%q) = %+v, want %+v", c.in, got, c.want)
			}
		})
	}
	if (Op{Kind: OpPreview}).Edits() || (Op{Kind: OpSave}).Edits() || (Op{}).Edits() || !(Op{Kind: OpAddRule}).Edits() {
		t.Error("Edits: only add and remove ops edit the form")
	}
	if got := OpValue(OpRemoveSubject, 1, 2); ParseOp(got) != (Op{Kind: OpRemoveSubject, Rule: 1, Row: 2}) {
		t.Errorf("OpValue/ParseOp do not round-trip: %q", got)
	}
}

func TestParseFlowSchemaFormRoundTrip(t *testing.T) {
	want := twoRuleForm()
	v := Values(want)
	v.Set("op", "preview")
	got, op := Parse(v)
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
		check func(t *testing.T, f Form)
	}{
		{"gaps are renumbered in index order", "r7.rule=1&r2.s5.name=b&r2.s1.name=a&r7.nr3.urls=/x&r7.nr0.urls=/w", func(t *testing.T, f Form) {
			if len(f.Rules) != 2 || len(f.Rules[0].Subjects) != 2 || f.Rules[0].Subjects[0].Name != "a" || f.Rules[0].Subjects[1].Name != "b" {
				t.Fatalf("%+v", f.Rules)
			}
			if urls := f.Rules[1].NonResourceRules; len(urls) != 2 || urls[0].URLs != "/w" || urls[1].URLs != "/x" {
				t.Fatalf("%+v", urls)
			}
		}},
		{"a rule without rows survives", "r0.rule=1", func(t *testing.T, f Form) {
			if len(f.Rules) != 1 || len(f.Rules[0].Subjects)+len(f.Rules[0].ResourceRules)+len(f.Rules[0].NonResourceRules) != 0 {
				t.Fatalf("%+v", f.Rules)
			}
		}},
		{"values are trimmed; unknown kinds and distinguishers are dropped", "name=+x+&precedence=+5+&distinguisher=ByPod&r0.s0.kind=Robot&r0.s0.name=+bob+", func(t *testing.T, f Form) {
			if f.Name != "x" || f.Precedence != "5" || f.Distinguisher != "" || f.Rules[0].Subjects[0] != (Subject{Kind: "User", Name: "bob"}) {
				t.Fatalf("%+v", f)
			}
		}},
		{"verbs keep the offered ones in order", "r0.rr0.verbs=watch&r0.rr0.verbs=nuke&r0.rr0.verbs=*&r0.rr0.verbs=get", func(t *testing.T, f Form) {
			if got := f.Rules[0].ResourceRules[0].Verbs; !slices.Equal(got, []string{"*", "get", "watch"}) {
				t.Fatalf("%q", got)
			}
		}},
		{"malformed keys are ignored", "r.s0.name=a&rx.rule=1&r01.rule=1&r1000.rule=1&r0.q0.name=a&r0.s.name=a&r0.s-1.name=a&r0&rule=1", func(t *testing.T, f Form) {
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
			f, _ := Parse(v)
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
	f, _ := Parse(v)
	if len(f.Rules) > MaxRows || len(f.Rules[0].Subjects) > MaxRows {
		t.Fatalf("%d rules, %d subjects: over the bound %d", len(f.Rules), len(f.Rules[0].Subjects), MaxRows)
	}
}

func TestApplyFormOp(t *testing.T) {
	base := twoRuleForm()
	cases := []struct {
		op    Op
		check func(f Form) bool
		focus string
	}{
		{Op{Kind: OpAddRule}, func(f Form) bool {
			return len(f.Rules) == 3 && len(f.Rules[2].Subjects) == 1 && len(f.Rules[2].ResourceRules) == 1
		}, "r2.s0"},
		{Op{Kind: OpRemoveRule, Rule: 0}, func(f Form) bool {
			return len(f.Rules) == 1 && f.Rules[0].Subjects[0].Name == "system:authenticated"
		}, ""},
		{Op{Kind: OpAddSubject, Rule: 1}, func(f Form) bool {
			return len(f.Rules[1].Subjects) == 2 && f.Rules[1].Subjects[1] == Subject{Kind: "User"}
		}, "r1.s1"},
		{Op{Kind: OpRemoveSubject, Rule: 0, Row: 0}, func(f Form) bool {
			return len(f.Rules[0].Subjects) == 1 && f.Rules[0].Subjects[0].Namespace == "ci"
		}, ""},
		{Op{Kind: OpAddResource, Rule: 0}, func(f Form) bool { return len(f.Rules[0].ResourceRules) == 2 }, "r0.rr1"},
		{Op{Kind: OpRemoveResource, Rule: 1, Row: 0}, func(f Form) bool { return len(f.Rules[1].ResourceRules) == 0 }, ""},
		{Op{Kind: OpAddNonResource, Rule: 0}, func(f Form) bool { return len(f.Rules[0].NonResourceRules) == 1 }, "r0.nr0"},
		{Op{Kind: OpRemoveNonResource, Rule: 1, Row: 0}, func(f Form) bool { return len(f.Rules[1].NonResourceRules) == 0 }, ""},
		// Out of range: nothing changes.
		{Op{Kind: OpRemoveRule, Rule: 5}, func(f Form) bool { return reflect.DeepEqual(f, twoRuleForm()) }, ""},
		{Op{Kind: OpRemoveSubject, Rule: 0, Row: 9}, func(f Form) bool { return reflect.DeepEqual(f, twoRuleForm()) }, ""},
		{Op{Kind: OpAddSubject, Rule: 9}, func(f Form) bool { return reflect.DeepEqual(f, twoRuleForm()) }, ""},
	}
	for _, c := range cases {
		t.Run(OpValue(c.op.Kind, c.op.Rule, c.op.Row), func(t *testing.T) {
			got := ApplyOp(base, c.op)
			if !c.check(got) {
				t.Errorf("after %+v: %+v", c.op, got.Rules)
			}
			if k := AddedRowKey(got, c.op); k != c.focus {
				t.Errorf("AddedRowKey = %q, want %q", k, c.focus)
			}
			if !reflect.DeepEqual(base, twoRuleForm()) {
				t.Fatal("ApplyOp changed the form it was given")
			}
		})
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
		if got := FieldKey(in); got != want {
			t.Errorf("FieldKey(%q) = %q, want %q", in, got, want)
		}
	}
}
