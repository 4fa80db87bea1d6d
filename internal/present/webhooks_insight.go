package present

import (
	"sort"
	"strconv"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// WebhookBackends maps each Service that webhooks call to what a lookup
// found. A nil map means the Services were not looked up at all.
type WebhookBackends map[admission.BackendKey]admission.Backend

// findingTone maps a lint severity to a tone: notes are neutral.
func findingTone(s admission.Severity) model.Tone {
	switch s {
	case admission.Error:
		return model.ToneError
	case admission.Warning:
		return model.ToneWarning
	}
	return model.ToneNeutral
}

// findings converts lint findings, most severe first.
func findings(fs []admission.Finding) []model.Finding {
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity > fs[j].Severity })
	out := make([]model.Finding, 0, len(fs))
	for _, f := range fs {
		out = append(out, model.Finding{Code: f.Code, Tone: findingTone(f.Severity), Title: f.Title, Message: f.Message})
	}
	return out
}

// hookFindings lints one webhook, including its Service when it was looked up.
func hookFindings(cfg admission.Config, h admission.Hook, backends WebhookBackends, now time.Time) []admission.Finding {
	fs := admission.Lint(cfg, h, now)
	if s := h.ServiceRef(); s != nil && backends != nil {
		fs = append(fs, admission.LintBackend(h, backends[admission.BackendKey{Namespace: s.Namespace, Name: s.Name}])...)
	}
	return fs
}

// WebhookInsights explains every webhook of a configuration: a summary
// table with lint badges, then one card per webhook with every field and
// each finding explained. problems summarises the findings for the page top.
func WebhookInsights(cfg admission.Config, backends WebhookBackends, now time.Time) (insights []model.Insight, problems []model.Banner) {
	table := &model.RichTable{
		Columns: []string{"Webhook", "Rules", "Failure policy", "Match policy", "Side effects", "Timeout", "Target", "Findings"},
		Empty:   "This configuration has no webhooks.",
	}
	var cards []model.Insight
	errs, warns := 0, 0
	for _, h := range cfg.Hooks {
		s := admission.Summarize(h)
		fs := findings(hookFindings(cfg, h, backends, now))
		var badges []model.Badge
		for _, f := range fs {
			badges = append(badges, model.Badge{Text: f.Title, Tone: f.Tone, Hint: f.Message})
			switch f.Tone {
			case model.ToneError:
				errs++
			case model.ToneWarning:
				warns++
			}
		}
		rules := make([]string, 0, len(s.Rules))
		for _, r := range s.Rules {
			rules = append(rules, r.String())
		}
		table.Rows = append(table.Rows, model.RichRow{TestID: "webhook-row", Cells: []model.Rich{
			{Text: s.Name, Mono: true, Href: "#" + webhookAnchor(s.Name)},
			{Lines: rules, Mono: true},
			{Text: s.FailurePolicy},
			{Text: s.MatchPolicy},
			{Text: s.SideEffects},
			{Text: s.Timeout},
			{Text: s.Target, Mono: true},
			{Badges: badges},
		}})
		cards = append(cards, webhookCard(cfg, h, s, fs, backends, len(cfg.Hooks) <= 3))
	}
	intro := "Each webhook with the API server's defaults filled in, and what could go wrong."
	if backends == nil {
		intro += " The Services behind the webhooks were not looked up."
	}
	insights = append(insights,
		model.Insight{Title: "Webhooks", TestID: "webhooks", Intro: intro, Table: table, Fields: []model.RichField{{
			Label: "Try a request", Value: model.Rich{Text: "Which webhooks would intercept it?", Href: urls.Intercept},
			Hint: "Every configuration's rules and selectors applied to a request you describe."}}},
		model.Insight{Title: "Webhook details", TestID: "webhook-details", Cards: cards})
	if errs > 0 {
		problems = append(problems, model.Banner{Tone: model.ToneError, TestID: "banner-webhook-errors",
			Title:   plural(errs, "error finding", "error findings"),
			Message: "Some webhooks can reject requests they should not, or cannot be reached: see the findings below."})
	}
	if warns > 0 {
		problems = append(problems, model.Banner{Tone: model.ToneWarning, TestID: "banner-webhook-warnings",
			Title:   plural(warns, "warning", "warnings"),
			Message: "Risky settings that are worth a look: see the findings below."})
	}
	return insights, problems
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// webhookAnchor is the id of a webhook's card; names are DNS-like, so they are safe as ids.
func webhookAnchor(name string) string { return "webhook-" + name }

func webhookCard(cfg admission.Config, h admission.Hook, s admission.Summary, fs []model.Finding, backends WebhookBackends, open bool) model.Insight {
	rules := &model.RichTable{Columns: []string{"Operations", "API groups", "API versions", "Resources", "Scope"},
		Empty: "No rules: this webhook is never called."}
	for _, r := range s.Rules {
		rules.Rows = append(rules.Rows, model.RichRow{TestID: "rule-row", Cells: []model.Rich{
			{Text: r.Operations}, {Text: r.Groups, Mono: true}, {Text: r.Versions, Mono: true}, {Text: r.Resources, Mono: true}, {Text: r.Scope},
		}})
	}
	var conds []model.Snippet
	for _, c := range s.MatchConditions {
		conds = append(conds, model.Snippet{Label: c.Name, Code: c.Expression})
	}
	fields := []model.RichField{
		{Label: "Failure policy", Value: model.Rich{Text: s.FailurePolicy},
			Hint: "When the webhook cannot be reached or errors: Fail rejects the request, Ignore lets it through."},
		{Label: "Match policy", Value: model.Rich{Text: s.MatchPolicy},
			Hint: "Equivalent also sends requests for the same objects through other groups or versions (converted); Exact only the listed ones."},
		{Label: "Side effects", Value: model.Rich{Text: s.SideEffects},
			Hint: "None or NoneOnDryRun let dry-run requests through to the webhook; anything else rejects them."},
		{Label: "Timeout", Value: model.Rich{Text: s.Timeout}, Hint: "How long the API server waits before applying the failure policy (1–30 s)."},
		{Label: "Admission review versions", Value: model.Rich{Text: s.ReviewVersions, Mono: true},
			Hint: "AdmissionReview versions the webhook accepts, preferred first."},
		{Label: "Namespace selector", Value: model.Rich{Text: s.NamespaceSelector, Mono: true},
			Hint: "Which namespaces' objects (by the namespace's labels) are sent; namespaces themselves are matched by their own labels."},
		{Label: "Object selector", Value: model.Rich{Text: s.ObjectSelector, Mono: true}, Hint: "Which objects, by their own labels, are sent."},
		{Label: "Match conditions", Value: model.Rich{Code: conds},
			Hint: "CEL expressions the API server evaluates before calling; all must be true. clusterdesk does not evaluate them."},
		{Label: "Client target", Value: model.Rich{Text: s.Target, Mono: true}, Hint: "Where the API server sends the AdmissionReview (Service port defaults to 443)."},
		{Label: "CA bundle", Value: model.Rich{Text: s.CABundle}, Hint: "PEM certificates the API server trusts for the webhook's serving certificate."},
	}
	if svc := h.ServiceRef(); svc != nil {
		fields = append(fields, model.RichField{Label: "Service", Value: model.Rich{Text: backendText(backends, admission.BackendKey{Namespace: svc.Namespace, Name: svc.Name})},
			Hint: "Looked up when this page was opened (a GET of the Service and a LIST of its EndpointSlices)."})
	}
	if cfg.Kind == admission.Mutating {
		fields = append(fields, model.RichField{Label: "Reinvocation policy", Value: model.Rich{Text: s.Reinvocation},
			Hint: "IfNeeded calls this webhook again when a later mutating webhook changed the object."})
	}
	return model.Insight{Title: s.Name, TestID: webhookAnchor(s.Name), Anchor: webhookAnchor(s.Name), Findings: fs, Fields: fields, Table: rules, Open: open || hasError(fs)}
}

func hasError(fs []model.Finding) bool {
	for _, f := range fs {
		if f.Tone == model.ToneError {
			return true
		}
	}
	return false
}

func backendText(backends WebhookBackends, key admission.BackendKey) string {
	if backends == nil {
		return "not looked up"
	}
	b := backends[key]
	switch {
	case !b.Checked && b.Err != "":
		return "not checked: " + b.Err
	case !b.Checked:
		return "not checked"
	case !b.ServiceFound:
		return "missing"
	case b.ExternalName:
		return "exists (ExternalName: resolved by DNS, no endpoints to count)"
	}
	return "exists, " + plural(b.ReadyEndpoints, "ready endpoint", "ready endpoints")
}
