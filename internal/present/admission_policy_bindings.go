package present

import (
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

var bindingColumns = []column{
	{"name", "Name", true},
	{"policy", "Policy", true},
	{"actions", "Validation actions", true},
	{"params", "Params", true},
	{"age", "Age", true},
}

// BindingList lays out the ValidatingAdmissionPolicyBinding list page.
func BindingList(items []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, q ListQuery, now time.Time) model.ListPage {
	rows := make([]row, 0, len(items))
	for _, b := range items {
		ageC, ageKey := ageCell(b.CreationTimestamp, now)
		actions := actionsText(b.Spec.ValidationActions)
		rows = append(rows, newRow(bindingKind, "/"+bindingKind, b.Name, []model.Cell{
			{Text: b.Spec.PolicyName, Mono: true}, {Text: actions, Badges: actionBadges(b.Spec.ValidationActions)},
			{Text: paramRefText(b.Spec.ParamRef), Mono: true}, ageC,
		}, []string{b.Spec.PolicyName, actions, paramRefText(b.Spec.ParamRef), ageKey}))
	}
	return table(bindingKind, bindingTitle, "/"+bindingKind, bindingColumns, rows, q)
}

// PolicyLookup is what the cache says of a binding's policy: Policy is nil
// when it does not exist, Known is false when it could not be read.
type PolicyLookup struct {
	Policy *admissionregistrationv1.ValidatingAdmissionPolicy
	Known  bool
}

// BindingDetail lays out one ValidatingAdmissionPolicyBinding: its policy
// (linked), what a failed validation does, its params and what it matches.
func BindingDetail(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, policy PolicyLookup, now time.Time) model.DetailPage {
	ageText, ageTitle, _ := age(b.CreationTimestamp, now)
	s := b.Spec
	page := model.DetailPage{
		KindID: bindingKind, KindTitle: bindingTitle, Name: b.Name,
		Status: bindingStatus(s.ValidationActions), ReplayHref: urls.BindingReplay(s.PolicyName, b.Name),
		Fields: []model.Field{
			{Label: "Policy", Value: s.PolicyName, Mono: true},
			{Label: "Validation actions", Value: actionsText(s.ValidationActions),
				Hint: "what a failed validation does: Deny rejects the request, Warn returns a warning, Audit records it in the audit event"},
			{Label: "Params", Value: paramRefText(s.ParamRef), Mono: true},
			{Label: "Age", Value: ageText, Hint: ageTitle},
		},
	}
	policyField := model.RichField{Label: "Policy", Value: model.Rich{Text: s.PolicyName, Href: PolicyHref(s.PolicyName), Mono: true},
		Hint: "spec.policyName: the ValidatingAdmissionPolicy this binding enforces."}
	switch {
	case !policy.Known:
		policyField.Value.Badges = []model.Badge{{Text: "Unknown", Tone: model.ToneUnknown, Hint: "the policies could not be read (forbidden or still loading)"}}
	case policy.Policy == nil:
		policyField.Value.Href = ""
		policyField.Value.Badges = []model.Badge{{Text: "Not found", Tone: model.ToneError}}
		page.Problems = append(page.Problems, model.Banner{Tone: model.ToneError, TestID: "finding-binding-no-policy",
			Title:   "Policy not found",
			Message: "There is no ValidatingAdmissionPolicy " + s.PolicyName + ": this binding enforces nothing until one is created."})
	default:
		policyField.Value.Badges = []model.Badge{policyChecking(policy.Policy)}
	}
	fields := []model.RichField{policyField,
		{Label: "Validation actions", Value: model.Rich{Text: actionsText(s.ValidationActions), Badges: actionBadges(s.ValidationActions)},
			Hint: "Deny rejects the request, Warn returns a warning to the client, Audit records the failure in the audit event."},
	}
	fields = append(fields, paramRefFields(s.ParamRef, policy)...)
	page.Insights = append(page.Insights,
		model.Insight{Title: "Binding", TestID: "binding-summary", Fields: fields},
		matchInsight("Match resources", "binding-match",
			"Narrows the policy's matchConstraints: a request must match both. Not set: the policy's own constraints apply.",
			s.MatchResources, nil),
	)
	return page
}

// bindingStatus badges a binding by the strongest thing it does.
func bindingStatus(actions []admissionregistrationv1.ValidationAction) model.Badge {
	for _, a := range actions {
		if a == admissionregistrationv1.Deny {
			return model.Badge{Text: "Denies", Tone: model.ToneWarning, Hint: "a failed validation rejects the request"}
		}
	}
	if len(actions) == 0 {
		return model.Badge{Text: "No actions", Tone: model.ToneError, Hint: "validationActions is required; the API server refuses a binding without one"}
	}
	return model.Badge{Text: "Reports only", Tone: model.ToneNeutral, Hint: "failed validations warn or are audited; nothing is rejected"}
}

func actionsText(as []admissionregistrationv1.ValidationAction) string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = string(a)
	}
	return join(out)
}

func actionBadges(as []admissionregistrationv1.ValidationAction) []model.Badge {
	for _, a := range as {
		if a == admissionregistrationv1.Deny {
			return []model.Badge{{Text: "Deny", Tone: model.ToneWarning, Hint: "a failed validation rejects the request"}}
		}
	}
	return nil
}

// paramRefText is a one-line summary of spec.paramRef.
func paramRefText(r *admissionregistrationv1.ParamRef) string {
	if r == nil {
		return "none"
	}
	var sb strings.Builder
	if r.Namespace != "" {
		sb.WriteString(r.Namespace + "/")
	}
	switch {
	case r.Name != "":
		sb.WriteString(r.Name)
	case r.Selector != nil:
		sb.WriteString("selector " + admission.SelectorText(r.Selector))
	}
	return sb.String()
}

// paramRefFields explains spec.paramRef as the admission plugin reads it
// (staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go,
// collectParams): a policy without paramKind ignores it; a binding without one
// evaluates the policy with null params; no param found is a failure only with
// parameterNotFoundAction Deny.
func paramRefFields(r *admissionregistrationv1.ParamRef, policy PolicyLookup) []model.RichField {
	hint := "Which objects of the policy's paramKind are passed as params; with a selector, the policy is evaluated once per object found."
	withKind := policy.Policy != nil && policy.Policy.Spec.ParamKind != nil
	if r == nil {
		f := model.RichField{Label: "Param ref", Value: model.Rich{Text: "none"}, Hint: hint}
		if withKind {
			f.Value.Badges = []model.Badge{{Text: "params is null", Tone: model.ToneWarning,
				Hint: "the policy has a paramKind but this binding passes none: its expressions see params as null"}}
		}
		return []model.RichField{f}
	}
	nf := "Allow (not set)"
	if r.ParameterNotFoundAction != nil {
		nf = string(*r.ParameterNotFoundAction)
	}
	out := []model.RichField{
		{Label: "Param ref", Value: model.Rich{Text: paramRefText(r), Mono: true}, Hint: hint},
		{Label: "When no param is found", Value: model.Rich{Text: nf},
			Hint: "parameterNotFoundAction: Allow counts it as passing, Deny applies the policy's failure policy."},
	}
	if policy.Policy != nil && !withKind {
		out[0].Value.Badges = []model.Badge{{Text: "Ignored", Tone: model.ToneWarning, Hint: "the policy has no paramKind: the API server ignores paramRef"}}
	}
	return out
}
