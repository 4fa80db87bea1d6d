package present

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/clusterdesk/clusterdesk/internal/attention"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// Attention words the home page's attention items (attention.Items, already
// kept to what the user may list) and notes.
func Attention(items []attention.Item, notes []string) model.Attention {
	out := model.Attention{Notes: notes}
	for _, it := range items {
		out.Items = append(out.Items, attentionItem(it))
	}
	return out
}

func attentionTone(s attention.Severity) (model.Tone, string) {
	switch s {
	case attention.Danger:
		return model.ToneError, "Danger"
	case attention.Warning:
		return model.ToneWarning, "Warning"
	}
	return model.TonePending, "Notice"
}

func humanAge(d time.Duration) string { return duration.HumanDuration(d) }

func attentionItem(it attention.Item) model.AttentionItem {
	m := model.AttentionItem{ID: string(it.Concern), Href: it.Href}
	m.Tone, m.Label = attentionTone(it.Severity)
	switch it.Concern {
	case attention.PendingCSRs:
		m.Title = plural(it.Count, "pending CertificateSigningRequest", "pending CertificateSigningRequests")
		m.Summary = "The oldest has waited " + humanAge(it.Oldest) + "."
		m.Link = "Open the pending queue"
	case attention.CSRStorms:
		m.Title = plural(it.Count, "storm of CertificateSigningRequests", "storms of CertificateSigningRequests")
		m.Summary = "One client asks again and again; each storm is one row of the queue and can be decided at once."
		m.Link = "Open the pending queue"
	case attention.UnapprovedSigners:
		m.Title = plural(it.Count, "signer nothing approves", "signers nothing approves")
		m.Summary = "Nobody is granted approval for them in particular: their requests stay pending until an administrator decides."
		m.Link = "Who approves each signer?"
	case attention.WebhooksFailing:
		m.Title = plural(it.Count, "webhook failing open or slow", "webhooks failing open or slow")
		m.Summary = "Measured by the API server since clusterdesk's previous read of its metrics."
		m.Link = "Open the webhook configurations"
	case attention.WebhookLints:
		m.Title = plural(it.Count, "webhook configuration with danger lints", "webhook configurations with danger lints")
		m.Summary = "While such a webhook is down, requests it matches may be rejected cluster-wide."
		m.Link = "Show only these configurations"
	case attention.LevelsRejecting:
		m.Title = plural(it.Count, "priority level rejecting requests", "priority levels rejecting requests")
		m.Summary = "API Priority and Fairness answers 429 to requests of these levels."
		m.Link = "Open the priority levels"
	case attention.CRDDrift:
		m.Title = plural(it.Count, "CustomResourceDefinition with stored-version drift", "CustomResourceDefinitions with stored-version drift")
		m.Summary = "Objects may be stored in etcd in more than one version (or one no longer served)."
		m.Link = "Show only the drifted CRDs"
	case attention.WatchesLost:
		m.Title = plural(it.Count, "kind whose watch is lost", "kinds whose watch is lost")
		m.Summary = "Their pages show what the cache held when the watch broke, while clusterdesk retries."
	}
	for _, k := range it.ByKind {
		m.Links = append(m.Links, model.AttentionLink{Href: k.Href, Text: fmt.Sprintf("%s (%d)", kindTitle(k.Kind), k.Count)})
	}
	if m.Href == "" && len(m.Links) == 0 {
		m.Link = ""
	}
	for _, e := range it.Entries {
		tone, _ := attentionTone(e.Severity)
		m.Entries = append(m.Entries, model.AttentionEntry{Name: e.Name, Href: e.Href, Tone: tone, Detail: entryDetail(it.Concern, e)})
	}
	if more := it.Count - len(it.Entries); more > 0 && it.Concern != attention.PendingCSRs {
		m.More = fmt.Sprintf("and %d more", more)
	}
	return m
}

func entryDetail(c attention.Concern, e attention.Entry) string {
	var parts []string
	switch c {
	case attention.PendingCSRs, attention.UnapprovedSigners:
		parts = append(parts, plural(e.Count, "pending", "pending"), "oldest "+humanAge(e.Age))
	case attention.CSRStorms:
		parts = append(parts, plural(e.Count, "request", "requests"), "since "+humanAge(e.Age))
	case attention.LevelsRejecting:
		where := "one API server instance"
		if e.Instance != "" {
			where = e.Instance
		}
		parts = append(parts, strconv.FormatFloat(e.Rate, 'f', 2, 64)+" rejected/s on "+where)
	case attention.WatchesLost:
		parts = append(parts, "last synced "+humanAge(e.Age)+" ago")
	}
	if e.Seconds > 0 {
		parts = append(parts, "p99 "+formatSeconds(e.Seconds))
	}
	if e.Rate > 0 && c == attention.WebhooksFailing {
		parts = append(parts, strconv.FormatFloat(e.Rate, 'f', 2, 64)+" failed open/s")
	}
	parts = append(parts, e.Note...)
	return strings.Join(parts, " · ")
}

// kindTitle is a kind's plural title ("ValidatingWebhookConfigurations"),
// its ID when the registry does not know it.
func kindTitle(id kube.KindID) string {
	for _, k := range kube.AllKinds() {
		if k.ID == id {
			return k.Title
		}
	}
	return string(id)
}
