package attention

import (
	"maps"
	"math"
	"slices"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// HookRef is one webhook of a configuration, as the health rule needs it.
type HookRef struct {
	Kind   kube.KindID // kube.Webhooks or kube.MutatingWebhooks
	Config string
	Hook   admission.Hook
}

// healthKey is how the API server's metrics name the webhook.
func (r HookRef) healthKey() apfload.WebhookKey {
	t := apfload.TypeValidating
	if r.Kind == kube.MutatingWebhooks {
		t = apfload.TypeMutating
	}
	return apfload.WebhookKey{Type: t, Name: r.Hook.Name}
}

// Dangerous is a webhook configuration's danger (error) lints, as its page
// shows them (admission.Lint of each webhook, without lookups).
type Dangerous struct {
	Kind  kube.KindID
	Notes []string // "<webhook>: <finding title>"
}

// DangerOf judges one configuration; ok is false without a danger lint.
// A CA's expiry is judged as of now, when the configuration changed: an
// expiry that passes later shows on the configuration's page, not here.
func DangerOf(kind kube.KindID, cfg admission.Config, lint func(admission.Config, admission.Hook) []admission.Finding) (Dangerous, bool) {
	d := Dangerous{Kind: kind}
	for _, h := range cfg.Hooks {
		for _, f := range lint(cfg, h) {
			if f.Severity == admission.Error {
				d.Notes = append(d.Notes, h.Name+": "+f.Title)
			}
		}
	}
	return d, len(d.Notes) > 0
}

// Lints is the webhook configurations with danger lints, one item per kind
// (Visible joins them for who may list both, each kind's view linked); each
// entry links the configuration's page, each item the list of its kind
// filtered to the configurations with danger lints (lint=danger).
func Lints(danger map[string]Dangerous) []Item {
	byKind := map[kube.KindID][]Entry{}
	for key, d := range danger {
		name := nameOfKey(key)
		byKind[d.Kind] = append(byKind[d.Kind], Entry{Name: name, Severity: Danger, Note: d.Notes, Href: urls.Object(d.Kind, name)})
	}
	return perKind(byKind, func(kind kube.KindID, entries []Entry) Item {
		it := Item{Concern: WebhookLints, Kinds: []kube.KindID{kind}, Count: len(entries),
			Href: urls.ListWithLint(kind, urls.LintDanger)}
		it.Entries, it.Severity = top(entries)
		return it
	})
}

// perKind makes one item of each kind's entries, in the kinds' order.
func perKind(byKind map[kube.KindID][]Entry, item func(kube.KindID, []Entry) Item) []Item {
	out := make([]Item, 0, len(byKind))
	for _, k := range slices.Sorted(maps.Keys(byKind)) {
		out = append(out, item(k, byKind[k]))
	}
	return out
}

// configKey names a configuration across both kinds.
func configKey(kind kube.KindID, name string) string { return string(kind) + "/" + name }

func nameOfKey(key string) string {
	for i := range key {
		if key[i] == '/' {
			return key[i+1:]
		}
	}
	return key
}

// Failing is the webhooks that failed open or were slow within the sampler's
// window (admission.LintHealth, as the configurations' health columns say),
// one item per kind as Lints. hooks answers which configured webhooks a
// metrics key names (the same name may be used in several configurations).
// Each entry links the configuration's page, where its health is first; each
// item the list of its kind, whose health column says which.
func Failing(ld apfload.Load, hooks func(apfload.WebhookKey) []HookRef) []Item {
	byKind := map[kube.KindID][]Entry{}
	for key, w := range ld.Webhooks {
		if w.FailedOpen <= 0 && (math.IsNaN(w.P99) || w.P99 <= 0) {
			continue // cheap test first: most webhooks are healthy
		}
		for _, ref := range hooks(key) {
			fs := admission.LintHealth(ref.Hook, admission.Health{FailedOpen: w.FailedOpen, P99: w.P99})
			if len(fs) == 0 {
				continue
			}
			e := Entry{Name: ref.Config + " / " + ref.Hook.Name, Href: urls.Object(ref.Kind, ref.Config)}
			for _, f := range fs {
				e.Severity = max(e.Severity, severityOf(f.Severity))
				e.Note = append(e.Note, f.Title)
				if f.Code == admission.CodeFailedOpen && ld.Window > 0 {
					e.Rate = w.FailedOpen / ld.Window.Seconds()
				}
				if f.Code == admission.CodeSlow {
					e.Seconds = w.P99
				}
			}
			byKind[ref.Kind] = append(byKind[ref.Kind], e)
		}
	}
	return perKind(byKind, func(kind kube.KindID, entries []Entry) Item {
		it := Item{Concern: WebhooksFailing, Kinds: []kube.KindID{kind}, Count: len(entries), Href: urls.List(kind)}
		it.Entries, it.Severity = top(entries)
		return it
	})
}
