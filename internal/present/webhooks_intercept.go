package present

import (
	"strconv"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// InterceptOperations are the operations a webhook rule can name.
var InterceptOperations = []string{"CREATE", "UPDATE", "DELETE", "CONNECT"}

// InterceptResult lays out which webhooks the API server would call for a
// request, in the order it considers them, each with why.
func InterceptResult(verdicts []admission.Verdict) *model.Insight {
	t := &model.RichTable{
		Columns: []string{"#", "Kind", "Configuration", "Webhook", "Called", "Why"},
		Empty:   "No webhook configuration in the cluster.",
	}
	n := 0
	for i, v := range verdicts {
		called := model.Badge{Text: "not called", Tone: model.ToneNeutral}
		if v.Called {
			n++
			called = model.Badge{Text: "called", Tone: model.ToneOK}
			if v.MatchConditions > 0 {
				called = model.Badge{Text: "called if its matchConditions hold", Tone: model.TonePending,
					Hint: "the API server evaluates the CEL matchConditions; clusterdesk does not"}
			}
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
			{Lines: v.Reasons},
		}})
	}
	return &model.Insight{
		Title: "Webhooks for this request", TestID: "intercept-result", Table: t,
		Intro: plural(n, "webhook would be called", "webhooks would be called") + " of " + strconv.Itoa(len(verdicts)) +
			". Mutating webhooks are called first, one after another in this order (each gets the object as the previous one returned it); then the validating webhooks, in parallel.",
	}
}
