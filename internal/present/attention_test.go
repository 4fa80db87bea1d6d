package present

import (
	"slices"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/attention"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// TestAttentionItemOfSeveralKindsLinksEachKindsView: an item gathered from
// both webhook kinds keeps its link text as the heading of one link per
// kind, titled and counted; a single-kind item keeps its one link.
func TestAttentionItemOfSeveralKindsLinksEachKindsView(t *testing.T) {
	gathered := attention.Item{Concern: attention.WebhookLints, Severity: attention.Danger, Count: 3,
		ByKind: []attention.KindLink{{Kind: kube.MutatingWebhooks, Count: 1, Href: "/mutatingwebhooks?lint=danger"},
			{Kind: kube.Webhooks, Count: 2, Href: "/validatingwebhooks?lint=danger"}}}
	m := attentionItem(gathered)
	want := []model.AttentionLink{{Href: "/mutatingwebhooks?lint=danger", Text: "MutatingWebhookConfigurations (1)"},
		{Href: "/validatingwebhooks?lint=danger", Text: "ValidatingWebhookConfigurations (2)"}}
	if m.Href != "" || m.Link != "Show only these configurations" || !slices.Equal(m.Links, want) {
		t.Errorf("gathered item: href %q, link %q, links %+v", m.Href, m.Link, m.Links)
	}
	single := attentionItem(attention.Item{Concern: attention.WebhookLints, Severity: attention.Danger, Count: 2,
		Href: "/validatingwebhooks?lint=danger"})
	if single.Href != "/validatingwebhooks?lint=danger" || single.Link == "" || single.Links != nil {
		t.Errorf("single item %+v", single)
	}
	lost := attentionItem(attention.Item{Concern: attention.WatchesLost, Severity: attention.Danger, Count: 1})
	if lost.Link != "" || lost.Href != "" || lost.Links != nil {
		t.Errorf("a lost watch's item links nothing of its own (its entry links the list): %+v", lost)
	}
}
