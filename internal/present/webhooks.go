package present

import (
	"sort"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/views/model"
)

var webhookColumns = []column{
	{"name", "Name", true},
	{"webhooks", "Webhooks", true},
	{"failure", "Failure policies", true},
	{"age", "Age", true},
}

// failurePolicies summarises the distinct failure policies ("Fail ×2, Ignore ×1").
// An unset policy defaults to Fail in admissionregistration/v1.
func failurePolicies(c *admissionregistrationv1.ValidatingWebhookConfiguration) (string, bool) {
	counts := map[string]int{}
	for _, w := range c.Webhooks {
		p := string(admissionregistrationv1.Fail)
		if w.FailurePolicy != nil {
			p = string(*w.FailurePolicy)
		}
		counts[p]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+" ×"+strconv.Itoa(counts[k]))
	}
	return join(parts), counts[string(admissionregistrationv1.Fail)] > 0
}

// WebhookList lays out the ValidatingWebhookConfiguration list page.
func WebhookList(items []*admissionregistrationv1.ValidatingWebhookConfiguration, q ListQuery, now time.Time) model.ListPage {
	const kind, action = "validatingwebhooks", "/validatingwebhooks"
	rows := make([]row, 0, len(items))
	for _, c := range items {
		ageC, ageKey := ageCell(c.CreationTimestamp, now)
		fp, anyFail := failurePolicies(c)
		fpCell := model.Cell{Text: fp}
		if anyFail {
			fpCell.Badges = []model.Badge{{Text: "Fail", Tone: model.ToneWarning, Hint: "a webhook that is down blocks the requests it matches"}}
		}
		rows = append(rows, newRow(kind, action, c.Name, []model.Cell{
			{Text: strconv.Itoa(len(c.Webhooks))}, fpCell, ageC,
		}, []string{padInt(int64(len(c.Webhooks))), fp, ageKey}))
	}
	return table(kind, "ValidatingWebhookConfigurations", action, webhookColumns, rows, q)
}

// WebhookDetail lays out one ValidatingWebhookConfiguration: a summary table
// of its webhooks with lint badges and a card per webhook. backends holds what
// lookups found about the Services the webhooks call (nil: not looked up).
func WebhookDetail(c *admissionregistrationv1.ValidatingWebhookConfiguration, backends WebhookBackends, now time.Time) model.DetailPage {
	ageText, ageTitle, _ := age(c.CreationTimestamp, now)
	fp, _ := failurePolicies(c)
	p := model.DetailPage{
		KindID: "validatingwebhooks", KindTitle: "ValidatingWebhookConfigurations", Name: c.Name,
		Status: model.Badge{Text: strconv.Itoa(len(c.Webhooks)) + " webhooks", Tone: model.ToneNeutral},
		Fields: []model.Field{
			{Label: "Webhooks", Value: strconv.Itoa(len(c.Webhooks))},
			{Label: "Failure policies", Value: fp},
			{Label: "Age", Value: ageText, Hint: ageTitle},
		},
	}
	p.Insights, p.Problems = WebhookInsights(admission.FromValidating(c), backends, now)
	return p
}
