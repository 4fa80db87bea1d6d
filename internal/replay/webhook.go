package replay

import (
	"context"
	"errors"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// WebhookOptions are one webhook replay's inputs: the recorded writes of
// the window against a draft of a webhook configuration and the deployed
// version (issue 45).
type WebhookOptions struct {
	Writes ledger.WriteStore
	Window ledger.WriteQuery
	Draft  WebhookConfig
	// Deployed is the configuration the cluster runs; nil when there is
	// none (a new configuration): it then sends nothing.
	Deployed   *WebhookConfig
	Namespaces []*corev1.Namespace
	Progress   func(Progress)
	// OnRequest, when set, gets every replayed request with both versions'
	// verdicts (the integration test compares them with what a real
	// webhook received). w is valid during the call only.
	OnRequest  func(w *ledger.Write, draft, deployed WebhookVerdict)
	MaxChanges int
	// MayList: as Options.MayList, the writes of resources the person may
	// not list are left out before they are evaluated.
	MayList func(group, resource string) bool
}

// The changes between the deployed configuration and the draft, per
// request and webhook.
const (
	NewlySent    = "newly sent"
	NoLongerSent = "no longer sent"
	// NewlyFailing: the request would fail if the webhook were unreachable
	// (sent under failurePolicy Fail, or refused before the call) under the
	// draft and not under the deployed version.
	NewlyFailing = "newly failing if unreachable"
)

// WebhookVerdict is what one version of the configuration does with one
// request: per webhook, by name.
type WebhookVerdict map[string]HookVerdict

// HookVerdict is what one webhook does with one request.
type HookVerdict struct {
	Sending Sending
	// Fail: failurePolicy Fail, so a Sent request fails if the webhook
	// cannot be reached.
	Fail bool
	Why  string // a Refused's error
}

// FailsIfUnreachable tells whether the request fails when the webhook
// cannot be reached: sent under Fail, or refused before any call.
func (v HookVerdict) FailsIfUnreachable() bool {
	return v.Sending == Refused || (v.Sending == Sent && v.Fail)
}

// State words v: "not sent", "sent (Fail)", "sent (Ignore)", "refused".
func (v HookVerdict) State() string {
	switch v.Sending {
	case Sent:
		if v.Fail {
			return "sent (Fail)"
		}
		return "sent (Ignore)"
	case Refused:
		return "refused"
	}
	return "not sent"
}

// WebhookTally counts one version's verdicts over the window, per request
// and webhook.
type WebhookTally struct{ Sent, FailsIfUnreachable, Refused int64 }

// WebhookSummary is a webhook replay's outcome.
type WebhookSummary struct {
	Counts
	// Exempt counts the writes no webhook is called for (admission
	// configuration itself).
	Exempt          int64
	Draft, Deployed WebhookTally
	// Each change is counted per request and webhook.
	NewlySent, NoLongerSent, NewlyFailing int64
	Groups                                []WebhookGroup
	// Changes lists the first MaxChanges changes, oldest first.
	Changes        []WebhookChange
	ChangesLeftOut int64
	Elapsed        time.Duration
}

// WebhookGroup counts the changes of one user, namespace, resource and
// operation.
type WebhookGroup struct {
	GroupKey
	NewlySent, NoLongerSent, NewlyFailing int64
}

func (g *WebhookGroup) total() int64 { return g.NewlySent + g.NoLongerSent + g.NewlyFailing }

// WebhookChange is one request whose sending to one webhook the draft changes.
type WebhookChange struct {
	Seq              int64
	WriteID, AuditID string
	Time             time.Time
	GroupKey
	Name    string
	Webhook string
	// What are the changes (NewlySent, NoLongerSent, NewlyFailing), joined by ", ".
	What            string
	Draft, Deployed string // HookVerdict.State
	Why             string // a refusal's error, the draft's first
}

// RunWebhooks replays the writes of the window against the draft and the
// deployed configuration. A configuration that cannot be replayed is a
// *BadDraftError before any write is read; a cancelled ctx ends it with
// ctx's error.
func RunWebhooks(ctx context.Context, o WebhookOptions) (WebhookSummary, error) {
	start := time.Now()
	if o.Writes == nil {
		return WebhookSummary{}, errors.New("replay: no recorded writes (the ledger is off, or its audit webhook is not configured)")
	}
	draft, err := compileWebhooks(o.Draft, "draft")
	if err != nil {
		return WebhookSummary{}, err
	}
	var deployed []hook
	if o.Deployed != nil {
		if deployed, err = compileWebhooks(*o.Deployed, "deployed"); err != nil {
			return WebhookSummary{}, err
		}
	}
	if o.MaxChanges <= 0 {
		o.MaxChanges = DefaultMaxChanges
	}
	r := &webhookRun{o: o, ctx: ctx, draft: draft, deployed: deployed, groups: map[GroupKey]*WebhookGroup{}}
	r.frame = newFrame(&r.sum.Counts, o.Progress, o.MayList, o.Namespaces)
	if err := r.frame.countWindow(ctx, o.Writes, o.Window); err != nil {
		return WebhookSummary{}, err
	}
	r.pred = newPredicates(r.frame.ns)
	// The webhooks of either version, the draft's order first: a
	// request's changes are listed per webhook in this order.
	seen := map[string]bool{}
	for _, h := range append(append([]hook{}, draft...), deployed...) {
		if n := h.name; !seen[n] {
			seen[n] = true
			r.names = append(r.names, n)
		}
	}
	err = o.Writes.ScanWrites(ctx, o.Window, r.write)
	r.sum.Groups = groupsOf(r.groups, (*WebhookGroup).total)
	r.sum.Elapsed = time.Since(start)
	r.frame.done(err)
	return r.sum, err
}

type webhookRun struct {
	o               WebhookOptions
	ctx             context.Context
	draft, deployed []hook
	names           []string
	*frame
	pred   predicates
	groups map[GroupKey]*WebhookGroup
	sum    WebhookSummary
}

func (r *webhookRun) verdict(hooks []hook, a admitted, t *WebhookTally) WebhookVerdict {
	v := WebhookVerdict{}
	for i := range hooks {
		h := &hooks[i]
		s, why := h.decide(r.ctx, r.pred, a.va)
		hv := HookVerdict{Sending: s, Fail: h.fail, Why: why}
		v[h.name] = hv
		t.Sent += b2i(s == Sent)
		t.Refused += b2i(s == Refused)
		t.FailsIfUnreachable += b2i(hv.FailsIfUnreachable())
	}
	return v
}

func (r *webhookRun) write(w *ledger.Write) error {
	a, ok := r.admit(w)
	if !ok {
		return nil
	}
	if exempt(w, a.va.Attributes) {
		r.sum.Exempt++
		return nil
	}
	d := r.verdict(r.draft, a, &r.sum.Draft)
	dep := r.verdict(r.deployed, a, &r.sum.Deployed)
	if r.o.OnRequest != nil {
		r.o.OnRequest(w, d, dep)
	}
	for _, name := range r.names {
		r.change(w, name, d[name], dep[name])
	}
	return nil
}

// change counts and lists what the draft changes for w and one webhook.
func (r *webhookRun) change(w *ledger.Write, name string, d, dep HookVerdict) {
	var what []string
	g := &WebhookGroup{}
	if d.Sending == Sent && dep.Sending != Sent {
		what, g.NewlySent = append(what, NewlySent), 1
	}
	if d.Sending != Sent && dep.Sending == Sent {
		what, g.NoLongerSent = append(what, NoLongerSent), 1
	}
	if d.FailsIfUnreachable() && !dep.FailsIfUnreachable() {
		what, g.NewlyFailing = append(what, NewlyFailing), 1
	}
	if len(what) == 0 {
		return
	}
	r.sum.NewlySent += g.NewlySent
	r.sum.NoLongerSent += g.NoLongerSent
	r.sum.NewlyFailing += g.NewlyFailing
	key := groupKey(w)
	grp := r.groups[key]
	if grp == nil {
		grp = &WebhookGroup{GroupKey: key}
		r.groups[key] = grp
	}
	grp.NewlySent += g.NewlySent
	grp.NoLongerSent += g.NoLongerSent
	grp.NewlyFailing += g.NewlyFailing
	if len(r.sum.Changes) >= r.o.MaxChanges {
		r.sum.ChangesLeftOut++
		return
	}
	r.sum.Changes = append(r.sum.Changes, WebhookChange{Seq: w.Seq, WriteID: w.ID, AuditID: w.AuditID, Time: w.Time,
		GroupKey: key, Name: w.Name, Webhook: name, What: strings.Join(what, ", "), Draft: d.State(), Deployed: dep.State(),
		Why: firstOf(d.Why, dep.Why)})
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
