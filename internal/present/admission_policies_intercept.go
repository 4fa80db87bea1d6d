package present

import (
	"strconv"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/celmatch"
	"github.com/clusterdesk/clusterdesk/internal/intercept"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// InterceptPolicies is the simulator's panel of ValidatingAdmissionPolicy
// bindings: whether each applies, its validationActions and failurePolicy,
// its params, and each matchCondition and validation with its outcome.
func InterceptPolicies(answers []intercept.PolicyAnswer) *model.Insight {
	t := &model.RichTable{
		Columns: []string{"Policy", "Binding", "Outcome", "Actions", "Why", "Validations"},
		Empty:   "No ValidatingAdmissionPolicy binding in the cluster.",
	}
	applies := 0
	for _, a := range answers {
		if a.Applies {
			applies++
		}
		badge, why := policyOutcome(a)
		t.Rows = append(t.Rows, model.RichRow{TestID: "intercept-policy-row", Cells: []model.Rich{
			// The kind IDs kube.AdmissionPolicies and kube.AdmissionPolicyBindings (present does not import kube).
			{Text: a.Policy, Mono: true, Href: urls.Object("validatingadmissionpolicies", a.Policy)},
			{Text: a.Binding, Mono: true, Href: urls.Object("validatingadmissionpolicybindings", a.Binding)},
			{Badges: []model.Badge{badge}},
			{Text: strings.Join(a.Actions, ", ") + " · failurePolicy " + a.FailurePolicy},
			{Lines: append(append([]string{}, a.Reasons...), why...)},
			policyValidations(a),
		}})
	}
	intro := plural(applies, "policy binding applies", "policy bindings apply") + " of " + strconv.Itoa(len(answers)) + "."
	if msg := intercept.DeniedMessage(answers); msg != "" {
		intro += " The API server would reject the request: " + msg
	}
	if w := intercept.Warnings(answers); len(w) > 0 {
		intro += " Warnings: " + strings.Join(w, "; ")
	}
	return &model.Insight{Title: "ValidatingAdmissionPolicies for this request", TestID: "intercept-policies", Table: t, Intro: intro}
}

// policyOutcome is the outcome badge of one binding and what it adds to the
// reasons (dispatcher.go in k8s.io/apiserver/pkg/admission/plugin/policy/validating).
func policyOutcome(a intercept.PolicyAnswer) (model.Badge, []string) {
	var why []string
	if a.Params != "" {
		why = append(why, a.Params)
	}
	if a.ParamShown != "" && a.Outcome != nil {
		why = append(why, "The validations shown are those evaluated with "+a.ParamShown+".")
	}
	if a.Outcome != nil {
		why = append(why, "Evaluated in "+a.Outcome.Elapsed.Round(time.Microsecond).String()+".")
	}
	switch {
	case !a.Applies:
		return model.Badge{Text: "does not apply", Tone: model.ToneNeutral}, why
	case a.ConfigError != "":
		if a.ConfigDenies {
			return model.Badge{Text: "denies", Tone: model.ToneError}, append(why, a.ConfigError)
		}
		return model.Badge{Text: "skipped", Tone: model.ToneNeutral, Hint: "failurePolicy Ignore"}, append(why, a.ConfigError)
	case a.Unresolved:
		return model.Badge{Text: "unknown", Tone: model.TonePending, Hint: "params not resolved"}, why
	case a.Outcome == nil:
		return model.Badge{Text: "skipped", Tone: model.ToneNeutral}, why
	case a.Outcome.Skipped != "":
		return model.Badge{Text: "skipped by matchConditions", Tone: model.ToneNeutral}, append(why, "matchCondition "+a.Outcome.Skipped+" is false: the validations are not evaluated.")
	case a.Unknown:
		return model.Badge{Text: "unknown", Tone: model.TonePending, Hint: "an authorizer check could not be asked"},
			append(why, "An authorizer check could not be asked ("+a.UnknownWhy+"), so what the policy does is unknown.")
	case a.Outcome.Error != "":
		why = append(why, "Error: "+a.Outcome.Error)
	}
	switch {
	case a.Denies:
		return model.Badge{Text: "denies", Tone: model.ToneError}, why
	case a.Warns:
		return model.Badge{Text: "warns", Tone: model.ToneWarning}, why
	}
	for _, v := range a.Outcome.Validations {
		if v.Denies {
			return model.Badge{Text: "fails (Audit only)", Tone: model.ToneWarning}, why
		}
	}
	return model.Badge{Text: "passes", Tone: model.ToneOK}, why
}

// policyValidations lists the matchConditions and validations with their results.
func policyValidations(a intercept.PolicyAnswer) model.Rich {
	cell := model.Rich{}
	if a.Outcome == nil {
		return cell
	}
	for _, c := range a.Outcome.Conditions {
		label := "matchCondition " + c.Name + ": " + string(c.Result)
		if c.Result == celmatch.Error {
			label += " (" + c.Error + ")"
		}
		if a.Unknown && c.AsksAuthorizer {
			label = "matchCondition " + c.Name + ": unknown (an authorizer check could not be asked)"
		}
		cell.Code = append(cell.Code, model.Snippet{Label: label, Code: c.Expression})
	}
	for i, v := range a.Outcome.Validations {
		label := "validation " + strconv.Itoa(i+1) + ": " + v.Result
		if v.Message != "" {
			label += " — " + v.Message
		}
		if v.Reason != "" && v.Result == "fail" {
			label += " (reason " + v.Reason + ")"
		}
		if a.Unknown && v.AsksAuthorizer {
			label = "validation " + strconv.Itoa(i+1) + ": unknown (an authorizer check could not be asked)"
		}
		cell.Code = append(cell.Code, model.Snippet{Label: label, Code: v.Expression})
	}
	// auditAnnotations: key → value as the audit event would carry it.
	for _, an := range a.Outcome.AuditAnnotations {
		label := "auditAnnotation " + an.Key
		switch an.Result {
		case celmatch.AnnotationPublished:
			label += " → " + an.Value
		case celmatch.AnnotationExcluded:
			label += ": not set (null or empty)"
			if an.Error != "" {
				label = "auditAnnotation " + an.Key + ": not set, error under failurePolicy Ignore (" + an.Error + ")"
			}
		default:
			label += ": error (" + an.Error + ")"
		}
		cell.Code = append(cell.Code, model.Snippet{Label: label, Code: an.ValueExpression})
	}
	return cell
}
