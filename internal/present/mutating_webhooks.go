package present

import (
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// MutatingWebhookList lays out the MutatingWebhookConfiguration list page,
// with the columns of the validating list.
func MutatingWebhookList(items []*admissionregistrationv1.MutatingWebhookConfiguration, q ListQuery, now time.Time) model.ListPage {
	const kind = "mutatingwebhooks"
	action := urls.List(kind)
	rows := make([]row, 0, len(items))
	for _, c := range items {
		rows = append(rows, webhookConfigRow(kind, action, c, admission.FromMutating(c), now))
	}
	return table(kind, "MutatingWebhookConfigurations", action, webhookColumns, rows, q)
}

// MutatingWebhookDetail lays out one MutatingWebhookConfiguration like a
// validating one, plus each webhook's reinvocation policy. backends holds
// what lookups found about the Services the webhooks call (nil: not looked up).
func MutatingWebhookDetail(c *admissionregistrationv1.MutatingWebhookConfiguration, backends WebhookBackends, now time.Time) model.DetailPage {
	ageText, ageTitle, _ := age(c.CreationTimestamp, now)
	cfg := admission.FromMutating(c)
	fp, _ := configFailurePolicies(cfg)
	p := model.DetailPage{
		KindID: "mutatingwebhooks", ReplayHref: urls.MutatingWebhookReplay(c.Name),
		KindTitle: "MutatingWebhookConfigurations", Name: c.Name,
		Status: model.Badge{Text: strconv.Itoa(len(c.Webhooks)) + " webhooks", Tone: model.ToneNeutral},
		Fields: []model.Field{
			{Label: "Webhooks", Value: strconv.Itoa(len(c.Webhooks))},
			{Label: "Failure policies", Value: fp},
			{Label: "Age", Value: ageText, Hint: ageTitle},
			{Label: "Order", Value: "Before every validating webhook, one after another", Hint: "each webhook gets the object as the previous one returned it"},
		},
	}
	p.Insights, p.Problems = WebhookInsights(cfg, backends, now)
	return p
}
