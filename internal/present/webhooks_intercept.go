package present

import (
	"slices"
	"strconv"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/celmatch"
	"github.com/clusterdesk/clusterdesk/internal/intercept"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// InterceptOperations are the operations a webhook rule can name.
var InterceptOperations = []string{"CREATE", "UPDATE", "DELETE", "CONNECT"}

// InterceptResult lays out which webhooks the API server would call for a
// request, in the order it considers them, each with why and, where
// evaluated, its matchConditions one by one. conds is parallel to verdicts
// (intercept.Answer.Conditions); it may be nil.
func InterceptResult(verdicts []admission.Verdict, conds []*intercept.Conditions) *model.Insight {
	t := &model.RichTable{
		Columns: []string{"#", "Kind", "Configuration", "Webhook", "Called", "Why", "matchConditions"},
		Empty:   "No webhook configuration in the cluster.",
	}
	n := 0
	for i, v := range verdicts {
		var c *intercept.Conditions
		if i < len(conds) {
			c = conds[i]
		}
		called, condCell, why := interceptCalled(v, c)
		if called.Text == "called" {
			n++
		}
		// The kind IDs kube.Webhooks and kube.MutatingWebhooks (present does not import kube).
		base, kind := urls.Object("validatingwebhooks", v.Config), "validating"
		if v.Kind == admission.Mutating {
			base, kind = urls.Object("mutatingwebhooks", v.Config), "mutating, called before validating"
		}
		t.Rows = append(t.Rows, model.RichRow{TestID: "intercept-row", Cells: []model.Rich{
			{Text: strconv.Itoa(i + 1)},
			{Text: kind},
			{Text: v.Config, Mono: true, Href: base},
			{Text: v.Webhook, Mono: true, Href: base + "#" + webhookAnchor(v.Webhook)},
			{Badges: []model.Badge{called}},
			{Lines: slices.Concat(v.Reasons, why)},
			condCell,
		}})
	}
	return &model.Insight{
		Title: "Webhooks for this request", TestID: "intercept-result", Table: t,
		Intro: plural(n, "webhook would be called", "webhooks would be called") + " of " + strconv.Itoa(len(verdicts)) +
			". Mutating webhooks are called first, one after another in this order (each gets the object as the previous one returned it); then the validating webhooks, in parallel.",
	}
}

// interceptCalled is the "Called" badge of one webhook, its matchConditions
// cell and what they add to the reasons. The decision follows
// k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions/matcher.go
// (celmatch.Decision).
func interceptCalled(v admission.Verdict, c *intercept.Conditions) (model.Badge, model.Rich, []string) {
	switch {
	case !v.Called:
		return model.Badge{Text: "not called", Tone: model.ToneNeutral}, model.Rich{}, nil
	case c == nil:
		return model.Badge{Text: "called", Tone: model.ToneOK}, model.Rich{}, nil
	case c.NotEvaluated != "":
		return model.Badge{Text: "called if its matchConditions hold", Tone: model.TonePending, Hint: c.NotEvaluated},
			model.Rich{Text: c.NotEvaluated}, nil
	}
	cell := model.Rich{}
	for _, cond := range c.Conditions {
		label := cond.Name + ": " + string(cond.Result)
		if cond.Result == celmatch.Error {
			label += " (" + cond.Error + ")"
		}
		if c.Unknown && cond.AsksAuthorizer {
			// The CEL library read the unanswered check as "not allowed":
			// its result is a guess, so it is not shown as one.
			label = cond.Name + ": unknown (an authorizer check could not be asked)"
		}
		cell.Code = append(cell.Code, model.Snippet{Label: label, Code: cond.Expression})
	}
	evaluated := "matchConditions evaluated in " + c.Elapsed.Round(time.Microsecond).String() + "."
	if c.Unknown {
		return model.Badge{Text: "unknown", Tone: model.TonePending, Hint: "an authorizer check could not be asked"}, cell,
			[]string{"An authorizer check could not be asked (" + c.UnknownWhy + "), so whether the webhook is called is unknown. " + evaluated}
	}
	switch c.Decision {
	case celmatch.Call:
		return model.Badge{Text: "called", Tone: model.ToneOK}, cell, []string{"Every matchCondition is true. " + evaluated}
	case celmatch.Reject:
		return model.Badge{Text: "request rejected", Tone: model.ToneError, Hint: "failurePolicy Fail"}, cell,
			[]string{"A matchCondition failed to evaluate and failurePolicy is Fail: the API server rejects the request without calling the webhook: " + c.Error + " " + evaluated}
	}
	if c.FailedCondition != "" {
		return model.Badge{Text: "skipped by matchConditions", Tone: model.ToneNeutral}, cell,
			[]string{"matchCondition " + c.FailedCondition + " is false: the webhook is skipped. " + evaluated}
	}
	return model.Badge{Text: "skipped by matchConditions", Tone: model.ToneNeutral, Hint: "failurePolicy Ignore"}, cell,
		[]string{"A matchCondition failed to evaluate and failurePolicy is Ignore: the webhook is skipped. " + evaluated}
}
