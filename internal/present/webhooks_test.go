package present

import (
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func webhookConfig() *admissionregistrationv1.ValidatingWebhookConfiguration {
	svc := func(name string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "policy", Name: name}}
	}
	rule := admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "policy"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{Name: "a.policy.dev", ClientConfig: svc("a"), Rules: []admissionregistrationv1.RuleWithOperations{rule},
				SideEffects:     ptr.To(admissionregistrationv1.SideEffectClassNone),
				MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "not-system", Expression: "!request.userInfo.username.startsWith('system:')"}}},
			{Name: "b.policy.dev", ClientConfig: svc("b"), Rules: []admissionregistrationv1.RuleWithOperations{rule},
				FailurePolicy: ptr.To(admissionregistrationv1.Ignore), SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone)},
		},
	}
}

func findingCodes(fs []model.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code)
	}
	return out
}

func TestWebhookDetailShowsLintsAndBackends(t *testing.T) {
	now := time.Now()
	backends := WebhookBackends{
		{Namespace: "policy", Name: "a"}: {Checked: true},
		{Namespace: "policy", Name: "b"}: {Checked: true, ServiceFound: true, ReadyEndpoints: 3},
	}
	p := WebhookDetail(webhookConfig(), backends, now)
	if len(p.Insights) != 2 {
		t.Fatalf("insights: %d", len(p.Insights))
	}
	table, cards := p.Insights[0].Table, p.Insights[1].Cards
	if len(table.Rows) != 2 || len(cards) != 2 {
		t.Fatalf("rows %d, cards %d", len(table.Rows), len(cards))
	}
	a, b := cards[0], cards[1]
	if a.Findings[0].Tone != model.ToneError || !slices.Contains(findingCodes(a.Findings), admission.CodeServiceMissing) {
		t.Errorf("card a findings %v: want service-missing and errors first", findingCodes(a.Findings))
	}
	if slices.Contains(findingCodes(b.Findings), admission.CodeServiceMissing) || slices.Contains(findingCodes(b.Findings), admission.CodeFailKubeSystem) {
		t.Errorf("card b (Ignore, healthy Service) findings %v", findingCodes(b.Findings))
	}
	if !a.Open {
		t.Error("a card with an error finding should start open")
	}
	var svc, conds model.Rich
	for _, f := range a.Fields {
		switch f.Label {
		case "Service":
			svc = f.Value
		case "Match conditions":
			conds = f.Value
		}
	}
	if svc.Text != "missing" || len(conds.Code) != 1 || conds.Code[0].Label != "not-system" {
		t.Errorf("service %q, match conditions %+v", svc.Text, conds.Code)
	}
	if got := table.Rows[0].Cells[7].Badges; len(got) != len(a.Findings) {
		t.Errorf("row badges %d, card findings %d", len(got), len(a.Findings))
	}
	if len(p.Problems) == 0 || p.Problems[0].TestID != "banner-webhook-errors" {
		t.Errorf("problems %+v", p.Problems)
	}
}

func TestWebhookDetailWithoutLookups(t *testing.T) {
	p := WebhookDetail(webhookConfig(), nil, time.Now())
	for _, c := range p.Insights[1].Cards {
		if slices.Contains(findingCodes(c.Findings), admission.CodeServiceMissing) {
			t.Errorf("%s: service-missing without a lookup", c.Title)
		}
	}
	if p.Insights[0].Intro == "" {
		t.Error("the page must say the Services were not looked up")
	}
}
