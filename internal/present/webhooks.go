package present

import (
	"sort"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

var webhookColumns = []column{
	{"name", "Name", true},
	{"webhooks", "Webhooks", true},
	{"failure", "Failure policies", true},
	lintColumn,
	{"age", "Age", true},
}

// WebhookList lays out the ValidatingWebhookConfiguration list page.
func WebhookList(items []*admissionregistrationv1.ValidatingWebhookConfiguration, q ListQuery, now time.Time) model.ListPage {
	const kind = "validatingwebhooks"
	action := urls.List(kind)
	rows := make([]row, 0, len(items))
	for _, c := range items {
		rows = append(rows, webhookConfigRow(kind, action, c, admission.FromValidating(c), now))
	}
	return table(kind, "ValidatingWebhookConfigurations", action, webhookColumns, rows, q)
}

// webhookConfigRow is one row of a webhook configuration list (validating or
// mutating): the number of webhooks, their failure policies, the counts of
// their lint findings, the age.
func webhookConfigRow(kind, action string, o metav1.Object, cfg admission.Config, now time.Time) row {
	name := o.GetName()
	ageC, ageKey := ageCell(o.GetCreationTimestamp(), now)
	fp, anyFail := configFailurePolicies(cfg)
	fpCell := model.Cell{Text: fp}
	if anyFail {
		fpCell.Badges = []model.Badge{{Text: "Fail", Tone: model.ToneWarning, Hint: "a webhook that is down blocks the requests it matches"}}
	}
	n := len(cfg.Hooks)
	lints := admission.ListTally(kind, o, now, func() admission.Tally { return admission.ConfigTally(cfg, now) })
	lintC, lintKey := lintCell(lints)
	r := newRow(kind, action, name, []model.Cell{
		{Text: strconv.Itoa(n)}, fpCell, lintC, ageC,
	}, []string{padInt(int64(n)), fp, lintKey, ageKey})
	r.lints = lints
	return r
}

// configFailurePolicies summarises the distinct failure policies of a
// configuration's webhooks ("Fail ×2, Ignore ×1"; unset means Fail in
// admissionregistration/v1) and whether any is Fail.
func configFailurePolicies(cfg admission.Config) (string, bool) {
	counts := map[string]int{}
	var keys []string
	for _, h := range cfg.Hooks {
		p := string(h.FailurePolicy)
		if counts[p] == 0 {
			keys = append(keys, p)
		}
		counts[p]++
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+" ×"+strconv.Itoa(counts[k]))
	}
	return join(parts), counts[string(admissionregistrationv1.Fail)] > 0
}

// WebhookDetail lays out one ValidatingWebhookConfiguration: a summary table
// of its webhooks with lint badges and a card per webhook. backends holds what
// lookups found about the Services the webhooks call (nil: not looked up).
func WebhookDetail(c *admissionregistrationv1.ValidatingWebhookConfiguration, backends WebhookBackends, now time.Time) model.DetailPage {
	ageText, ageTitle, _ := age(c.CreationTimestamp, now)
	fp, _ := configFailurePolicies(admission.FromValidating(c))
	p := model.DetailPage{
		KindID: "validatingwebhooks", ReplayHref: urls.ValidatingWebhookReplay(c.Name),
		KindTitle: "ValidatingWebhookConfigurations", Name: c.Name,
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
