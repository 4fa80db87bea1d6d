package present

import (
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The kind ids and list addresses of the CEL admission policies
// (admissionregistration.k8s.io/v1, Kubernetes 1.30+), as the kind registry
// names them.
const (
	policyKind   = "validatingadmissionpolicies"
	policyTitle  = "ValidatingAdmissionPolicies"
	bindingKind  = "validatingadmissionpolicybindings"
	bindingTitle = "ValidatingAdmissionPolicyBindings"
)

// PolicyHref is the page of one ValidatingAdmissionPolicy.
func PolicyHref(name string) string { return urls.Object(policyKind, name) }

// BindingHref is the page of one ValidatingAdmissionPolicyBinding.
func BindingHref(name string) string { return urls.Object(bindingKind, name) }

var policyColumns = []column{
	{"name", "Name", true},
	{"validations", "Validations", true},
	{"failure", "Failure policy", true},
	{"params", "Param kind", true},
	{"checks", "Type checking", true},
	{"age", "Age", true},
}

// PolicyList lays out the ValidatingAdmissionPolicy list page.
func PolicyList(items []*admissionregistrationv1.ValidatingAdmissionPolicy, q ListQuery, now time.Time) model.ListPage {
	rows := make([]row, 0, len(items))
	for _, p := range items {
		ageC, ageKey := ageCell(p.CreationTimestamp, now)
		n := len(p.Spec.Validations)
		fp := policyFailurePolicy(p.Spec.FailurePolicy)
		fpCell := model.Cell{Text: fp}
		if fp == string(admissionregistrationv1.Fail) {
			fpCell.Badges = []model.Badge{{Text: "Fail", Tone: model.ToneWarning, Hint: "an expression that errors rejects the request"}}
		}
		check := policyChecking(p)
		rows = append(rows, newRow(policyKind, "/"+policyKind, p.Name, []model.Cell{
			{Text: strconv.Itoa(n)}, fpCell, {Text: paramKindText(p.Spec.ParamKind), Mono: true},
			{Badges: []model.Badge{check}}, ageC,
		}, []string{padInt(int64(n)), fp, paramKindText(p.Spec.ParamKind), check.Text, ageKey}))
	}
	return table(policyKind, policyTitle, "/"+policyKind, policyColumns, rows, q)
}

// policyFailurePolicy is spec.failurePolicy with its default, Fail
// (staging/src/k8s.io/api/admissionregistration/v1/types.go, FailurePolicy).
func policyFailurePolicy(fp *admissionregistrationv1.FailurePolicyType) string {
	if fp == nil {
		return string(admissionregistrationv1.Fail)
	}
	return string(*fp)
}

// paramKindText is "apiVersion Kind" of a policy's parameters, or "none".
func paramKindText(pk *admissionregistrationv1.ParamKind) string {
	if pk == nil {
		return "none"
	}
	return strings.TrimSpace(pk.APIVersion + " " + pk.Kind)
}

// policyChecking is what the type checking of the expressions says: checked clean, warnings, or not yet done for this generation.
func policyChecking(p *admissionregistrationv1.ValidatingAdmissionPolicy) model.Badge {
	switch {
	case p.Status.ObservedGeneration < p.Generation || p.Status.TypeChecking == nil:
		// kube-controller-manager's validatingadmissionpolicy-status-controller
		// writes status.typeChecking for each generation
		// (pkg/controller/validatingadmissionpolicystatus); a cluster that
		// does not run it leaves every policy here.
		return model.Badge{Text: "Not checked yet", Tone: model.TonePending,
			Hint: "kube-controller-manager type-checks each generation's expressions (validatingadmissionpolicy-status-controller); not done yet, or that controller does not run"}
	case len(p.Status.TypeChecking.ExpressionWarnings) > 0:
		return model.Badge{Text: plural(len(p.Status.TypeChecking.ExpressionWarnings), "type warning", "type warnings"), Tone: model.ToneWarning,
			Hint: "status.typeChecking: expressions that may fail against the matched types"}
	default:
		return model.Badge{Text: "Checked", Tone: model.ToneOK, Hint: "the type checker found no errors in the expressions"}
	}
}

// PolicyDetail lays out one ValidatingAdmissionPolicy: what it matches, each
// validation, audit annotations, variables, the type checker's warnings and
// the bindings that reference it (a policy without a binding is not enforced).
func PolicyDetail(p *admissionregistrationv1.ValidatingAdmissionPolicy, bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) model.DetailPage {
	ageText, ageTitle, _ := age(p.CreationTimestamp, now)
	s := p.Spec
	page := model.DetailPage{
		KindID: policyKind, KindTitle: policyTitle, Name: p.Name,
		Status: policyChecking(p), ReplayHref: urls.PolicyReplay(p.Name),
		Fields: []model.Field{
			{Label: "Failure policy", Value: policyFailurePolicy(s.FailurePolicy),
				Hint: "when an expression errors or the parameters cannot be found: Fail rejects the request, Ignore lets it through"},
			{Label: "Param kind", Value: paramKindText(s.ParamKind), Mono: true, Hint: "the kind of the objects bindings pass as params"},
			{Label: "Validations", Value: strconv.Itoa(len(s.Validations))},
			{Label: "Age", Value: ageText, Hint: ageTitle},
		},
	}
	using := policyBindings(p.Name, bindings)
	if bindings != nil && len(using) == 0 {
		page.Problems = append(page.Problems, model.Banner{Tone: model.ToneWarning, TestID: "finding-policy-unbound",
			Title:   "Not enforced",
			Message: "No ValidatingAdmissionPolicyBinding references this policy, so the API server evaluates it for no request."})
	}
	if tc := typeWarnings(p); len(tc) > 0 {
		page.Problems = append(page.Problems, model.Banner{Tone: model.ToneWarning, TestID: "finding-policy-type-warnings",
			Title:   plural(len(tc), "type warning", "type warnings"),
			Message: "The type checker warns about expressions that may fail at admission: see Type checking below."})
	}
	page.Insights = append(page.Insights,
		matchInsight("Matches", "policy-match", "Requests the policy is evaluated for; a binding can narrow them further.", s.MatchConstraints, s.MatchConditions),
		validationsInsight(s.Validations),
		policyBindingsInsight(using, bindings == nil),
	)
	if len(s.AuditAnnotations) > 0 {
		page.Insights = append(page.Insights, auditAnnotationsInsight(s.AuditAnnotations))
	}
	if len(s.Variables) > 0 {
		page.Insights = append(page.Insights, variablesInsight(s.Variables))
	}
	if tc := typeWarnings(p); len(tc) > 0 {
		page.Insights = append(page.Insights, typeCheckingInsight(tc))
	}
	page.Insights = append(page.Insights, policyAgreement(p.Name, using, bindings == nil))
	for _, c := range p.Status.Conditions {
		a, t, _ := age(c.LastTransitionTime, now)
		page.Conditions = append(page.Conditions, model.Condition{Type: c.Type, Status: string(c.Status),
			Tone: conditionTone(string(c.Status), true), Reason: c.Reason, Message: c.Message, Age: a, Time: t})
	}
	return page
}

// policyBindings are the bindings whose spec.policyName is name.
func policyBindings(name string, all []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) []*admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	var out []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, b := range all {
		if b.Spec.PolicyName == name {
			out = append(out, b)
		}
	}
	return out
}

func validationsInsight(vs []admissionregistrationv1.Validation) model.Insight {
	t := &model.RichTable{Columns: []string{"Expression", "Message", "Reason"},
		Empty: "No validations: the policy only records audit annotations, if any."}
	for i, v := range vs {
		msg := model.Rich{Text: orDash(v.Message)}
		if v.MessageExpression != "" {
			msg = model.Rich{Text: v.Message, Code: []model.Snippet{{Label: "messageExpression", Code: v.MessageExpression}}}
		}
		t.Rows = append(t.Rows, model.RichRow{TestID: "validation-row", Cells: []model.Rich{
			{Code: []model.Snippet{{Label: "#" + strconv.Itoa(i+1), Code: v.Expression}}},
			msg,
			{Text: validationReason(v.Reason)},
		}})
	}
	return model.Insight{Title: "Validations", TestID: "policy-validations", Table: t,
		Intro: "CEL expressions that must all be true; a false one fails the request with its message, as the binding's validation actions say."}
}

// validationReason is the HTTP reason a failed validation answers with; the
// default is Invalid (staging/src/k8s.io/api/admissionregistration/v1/types.go, Validation.Reason).
func validationReason(r *metav1.StatusReason) string {
	if r == nil || *r == "" {
		return "Invalid (default)"
	}
	return string(*r)
}

func auditAnnotationsInsight(as []admissionregistrationv1.AuditAnnotation) model.Insight {
	t := &model.RichTable{Columns: []string{"Key", "Value expression"}}
	for _, a := range as {
		t.Rows = append(t.Rows, model.RichRow{TestID: "audit-annotation-row", Cells: []model.Rich{
			{Text: a.Key, Mono: true}, {Code: []model.Snippet{{Code: a.ValueExpression}}},
		}})
	}
	return model.Insight{Title: "Audit annotations", TestID: "policy-audit-annotations", Table: t,
		Intro: "Written to the audit event of each request the policy is evaluated for (the key is prefixed with the policy's name)."}
}

func variablesInsight(vs []admissionregistrationv1.Variable) model.Insight {
	t := &model.RichTable{Columns: []string{"Name", "Expression"}}
	for _, v := range vs {
		t.Rows = append(t.Rows, model.RichRow{TestID: "variable-row", Cells: []model.Rich{
			{Text: "variables." + v.Name, Mono: true}, {Code: []model.Snippet{{Code: v.Expression}}},
		}})
	}
	return model.Insight{Title: "Variables", TestID: "policy-variables", Table: t,
		Intro: "Named expressions the validations can use; each is evaluated at most once per request."}
}

func typeCheckingInsight(ws []admissionregistrationv1.ExpressionWarning) model.Insight {
	t := &model.RichTable{Columns: []string{"Field", "Warning"}}
	for _, w := range ws {
		t.Rows = append(t.Rows, model.RichRow{TestID: "type-warning-row", Cells: []model.Rich{
			{Text: w.FieldRef, Mono: true}, {Lines: strings.Split(strings.TrimSpace(w.Warning), "\n"), Mono: true},
		}})
	}
	return model.Insight{Title: "Type checking", TestID: "policy-type-checking", Table: t,
		Intro: "status.typeChecking: what kube-controller-manager found checking the expressions against the matched types."}
}

func policyBindingsInsight(using []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, unknown bool) model.Insight {
	t := &model.RichTable{Columns: []string{"Binding", "Validation actions", "Params"},
		Empty: "No binding references this policy: it is not enforced."}
	if unknown {
		t.Empty = "The bindings could not be read (forbidden or still loading)."
	}
	for _, b := range using {
		t.Rows = append(t.Rows, model.RichRow{TestID: "policy-binding-row", Cells: []model.Rich{
			{Text: b.Name, Href: BindingHref(b.Name), Mono: true},
			{Text: actionsText(b.Spec.ValidationActions), Badges: actionBadges(b.Spec.ValidationActions)},
			{Text: paramRefText(b.Spec.ParamRef), Mono: true},
		}})
	}
	return model.Insight{Title: "Bindings", TestID: "policy-bindings", Table: t,
		Intro: "ValidatingAdmissionPolicyBindings whose policyName is this policy: each enforces it, within its own matchResources."}
}

// matchInsight lays out a MatchResources (a policy's matchConstraints or a
// binding's matchResources) and, for a policy, its matchConditions.
func matchInsight(title, testID, intro string, m *admissionregistrationv1.MatchResources, conds []admissionregistrationv1.MatchCondition) model.Insight {
	in := model.Insight{Title: title, TestID: testID, Intro: intro}
	rules := &model.RichTable{Columns: []string{"", "Operations", "API groups", "API versions", "Resources", "Names", "Scope"},
		Empty: "No resource rules."}
	if m == nil {
		rules.Empty = "Not set."
	} else {
		for _, r := range m.ResourceRules {
			rules.Rows = append(rules.Rows, namedRuleRow("Match", "resource-rule-row", r))
		}
		for _, r := range m.ExcludeResourceRules {
			rules.Rows = append(rules.Rows, namedRuleRow("Exclude", "exclude-rule-row", r))
		}
		mp := string(admissionregistrationv1.Equivalent) // the default (types.go, MatchResources.MatchPolicy)
		if m.MatchPolicy != nil {
			mp = string(*m.MatchPolicy)
		}
		in.Fields = append(in.Fields,
			model.RichField{Label: "Namespace selector", Value: model.Rich{Text: admission.SelectorText(m.NamespaceSelector), Mono: true},
				Hint: "Which namespaces' objects, by the namespace's labels."},
			model.RichField{Label: "Object selector", Value: model.Rich{Text: admission.SelectorText(m.ObjectSelector), Mono: true},
				Hint: "Which objects, by their own labels."},
			model.RichField{Label: "Match policy", Value: model.Rich{Text: mp},
				Hint: "Equivalent also matches the same objects through other groups or versions; Exact only the listed ones."})
	}
	if conds != nil {
		var code []model.Snippet
		for _, c := range conds {
			code = append(code, model.Snippet{Label: c.Name, Code: c.Expression})
		}
		v := model.Rich{Code: code}
		if len(code) == 0 {
			v.Text = "none"
		}
		in.Fields = append(in.Fields, model.RichField{Label: "Match conditions", Value: v,
			Hint: "CEL expressions that must all be true for the policy to be evaluated; clusterdesk does not evaluate them."})
	}
	in.Table = rules
	return in
}

func namedRuleRow(which, testID string, r admissionregistrationv1.NamedRuleWithOperations) model.RichRow {
	ops := make([]string, 0, len(r.Operations))
	for _, o := range r.Operations {
		ops = append(ops, string(o))
	}
	scope := "*"
	if r.Scope != nil {
		scope = string(*r.Scope)
	}
	names := "all"
	if len(r.ResourceNames) > 0 {
		names = strings.Join(r.ResourceNames, ", ")
	}
	return model.RichRow{TestID: testID, Cells: []model.Rich{
		{Text: which}, {Text: strings.Join(ops, ", ")}, {Text: groupsText(r.APIGroups), Mono: true},
		{Text: strings.Join(r.APIVersions, ", "), Mono: true}, {Text: strings.Join(r.Resources, ", "), Mono: true},
		{Text: names, Mono: true}, {Text: scope},
	}}
}

// groupsText names the core group, which is "" in a rule.
func groupsText(gs []string) string {
	out := make([]string, len(gs))
	for i, g := range gs {
		if g == "" {
			g = `"" (core)`
		}
		out[i] = g
	}
	return strings.Join(out, ", ")
}

// typeWarnings is status.typeChecking's warnings (none when not checked).
func typeWarnings(p *admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning {
	if p.Status.TypeChecking == nil {
		return nil
	}
	return p.Status.TypeChecking.ExpressionWarnings
}
