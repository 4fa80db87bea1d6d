package replay

import (
	"context"
	"errors"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// vwh is a validating configuration of one webhook "check" on configmaps
// CREATE and UPDATE, failurePolicy Fail, changed by mod.
func vwh(mod func(*admissionregistrationv1.ValidatingWebhook)) WebhookConfig {
	h := admissionregistrationv1.ValidatingWebhook{Name: "check.example.com",
		FailurePolicy: ptr.To(admissionregistrationv1.Fail), SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
		}}}
	if mod != nil {
		mod(&h)
	}
	return WebhookConfig{Validating: &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "check"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{h}}}
}

// sentTo replays writes against draft alone and returns, per write name
// and operation, whether the webhook was sent it ("sent", "not sent",
// "refused").
func sentTo(t *testing.T, writes []ledger.Write, draft WebhookConfig) map[string]string {
	t.Helper()
	got := map[string]string{}
	_, err := RunWebhooks(context.Background(), WebhookOptions{Writes: newStore(t, writes), Draft: draft, Namespaces: todays,
		OnRequest: func(w *ledger.Write, d, _ WebhookVerdict) {
			s := "not sent"
			switch d["check.example.com"].Sending {
			case Sent:
				s = "sent"
			case Refused:
				s = "refused"
			}
			got[w.Name+" "+w.Operation] = s
		}})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestWebhookMatching: each predicate of the API server decides, as
// ShouldCallHook asks them: rules (operation, resource, subresource,
// scope), namespaceSelector on today's labels, objectSelector on the new
// or the old object, matchConditions (false skips, an error refuses under
// Fail and skips under Ignore), and a dry run to a webhook with side effects.
func TestWebhookMatching(t *testing.T) {
	labelled := func(w ledger.Write, labels string) ledger.Write {
		w.Object = []byte(strings.Replace(string(w.Object), `{"app":"web"}`, labels, 1))
		return w
	}
	status := cm("alice", "prod", "st", ledger.OpUpdate, 200, "x")
	status.Subresource = "status"
	dry := cm("alice", "prod", "dry", ledger.OpCreate, 200, "x")
	dry.DryRun = true
	ns := ledger.Write{ID: "ns1", Time: at0, User: "admin", Verb: "create", Operation: ledger.OpCreate, APIVersion: "v1",
		Resource: "namespaces", Namespace: "team", Name: "team", Code: 201,
		Object: []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team","labels":{"env":"prod"}}}`)}
	writes := []ledger.Write{
		cm("alice", "prod", "p", ledger.OpCreate, 201, "x"),
		cm("bob", "dev", "d", ledger.OpCreate, 201, "x"),
		labelled(cm("bob", "dev", "l", ledger.OpCreate, 201, "x"), `{"app":"db"}`),
		cm("bob", "dev", "l", ledger.OpUpdate, 200, "x"), // its old object has app=db
		cm("alice", "prod", "p", ledger.OpDelete, 200, ""),
		status, dry, ns,
	}
	for _, tc := range []struct {
		name string
		mod  func(*admissionregistrationv1.ValidatingWebhook)
		want map[string]string
	}{
		{"rules", nil, map[string]string{"p CREATE": "sent", "d CREATE": "sent", "p DELETE": "not sent", "st UPDATE": "not sent", "dry CREATE": "sent", "team CREATE": "not sent"}},
		{"subresource", func(h *admissionregistrationv1.ValidatingWebhook) {
			h.Rules[0].Resources = []string{"configmaps/status"}
		}, map[string]string{"p CREATE": "not sent", "st UPDATE": "sent"}},
		{"delete and wildcard", func(h *admissionregistrationv1.ValidatingWebhook) {
			h.Rules[0].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Delete}
			h.Rules[0].Resources = []string{"*"}
		}, map[string]string{"p DELETE": "sent", "p CREATE": "not sent"}},
		{"cluster scope", func(h *admissionregistrationv1.ValidatingWebhook) {
			h.Rules[0].Scope = ptr.To(admissionregistrationv1.ClusterScope)
			h.Rules[0].Resources = []string{"*"}
		}, map[string]string{"team CREATE": "sent", "p CREATE": "not sent"}},
		{"namespaceSelector", func(h *admissionregistrationv1.ValidatingWebhook) {
			h.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
		}, map[string]string{"p CREATE": "sent", "d CREATE": "not sent"}},
		{"namespaceSelector on a namespace's own labels", func(h *admissionregistrationv1.ValidatingWebhook) {
			h.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
			h.Rules[0].Resources = []string{"namespaces"}
		}, map[string]string{"team CREATE": "sent"}},
		{"objectSelector, new or old object", func(h *admissionregistrationv1.ValidatingWebhook) {
			h.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
		}, map[string]string{"l CREATE": "sent", "l UPDATE": "sent", "d CREATE": "not sent"}},
		{"matchConditions false", func(h *admissionregistrationv1.ValidatingWebhook) {
			h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "alice", Expression: "request.userInfo.username == 'alice'"}}
		}, map[string]string{"p CREATE": "sent", "d CREATE": "not sent"}},
		{"matchConditions error under Fail", func(h *admissionregistrationv1.ValidatingWebhook) {
			h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "boom", Expression: "object.data.nope == 'x'"}}
		}, map[string]string{"p CREATE": "refused"}},
		{"matchConditions error under Ignore", func(h *admissionregistrationv1.ValidatingWebhook) {
			h.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
			h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "boom", Expression: "object.data.nope == 'x'"}}
		}, map[string]string{"p CREATE": "not sent"}},
		{"dry run with side effects", func(h *admissionregistrationv1.ValidatingWebhook) {
			h.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassSome)
		}, map[string]string{"dry CREATE": "refused", "p CREATE": "sent"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sentTo(t, writes, vwh(tc.mod))
			for k, want := range tc.want {
				if got[k] != want {
					t.Errorf("%s: %q, want %q (all: %v)", k, got[k], want, got)
				}
			}
		})
	}
}

// TestWebhookReplayChanges: a draft that widens the namespaceSelector and
// turns Ignore into Fail counts newly sent and newly failing requests per
// group; one that narrows counts no longer sent; the changes name the
// webhook; a mutating configuration replays the same way.
func TestWebhookReplayChanges(t *testing.T) {
	writes := []ledger.Write{
		cm("alice", "prod", "p1", ledger.OpCreate, 201, "x"),
		cm("alice", "prod", "p2", ledger.OpCreate, 201, "x"),
		cm("bob", "dev", "d1", ledger.OpCreate, 201, "x"),
	}
	prodOnly := func(h *admissionregistrationv1.ValidatingWebhook) {
		h.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
		h.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
	}
	deployed := vwh(prodOnly)
	sum, err := RunWebhooks(context.Background(), WebhookOptions{Writes: newStore(t, writes), Draft: vwh(nil), Deployed: &deployed, Namespaces: todays})
	if err != nil {
		t.Fatal(err)
	}
	if sum.NewlySent != 1 || sum.NoLongerSent != 0 || sum.NewlyFailing != 3 || sum.Replayed != 3 {
		t.Fatalf("newly sent %d, no longer %d, newly failing %d, replayed %d; want 1, 0, 3, 3", sum.NewlySent, sum.NoLongerSent, sum.NewlyFailing, sum.Replayed)
	}
	if len(sum.Groups) != 2 || sum.Groups[0].User != "alice" || sum.Groups[0].NewlyFailing != 2 || sum.Groups[1].NewlySent != 1 {
		t.Errorf("groups %+v", sum.Groups)
	}
	if len(sum.Changes) != 3 || sum.Changes[2].Webhook != "check.example.com" || sum.Changes[2].What != NewlySent+", "+NewlyFailing ||
		sum.Changes[2].Draft != "sent (Fail)" || sum.Changes[2].Deployed != "not sent" {
		t.Errorf("changes %+v", sum.Changes)
	}
	narrow := vwh(prodOnly)
	sum, err = RunWebhooks(context.Background(), WebhookOptions{Writes: newStore(t, writes), Draft: narrow, Deployed: ptr.To(vwh(nil)), Namespaces: todays})
	if err != nil {
		t.Fatal(err)
	}
	if sum.NoLongerSent != 1 || sum.NewlySent != 0 || sum.NewlyFailing != 0 {
		t.Errorf("narrowed: no longer sent %d, newly sent %d, newly failing %d; want 1, 0, 0", sum.NoLongerSent, sum.NewlySent, sum.NewlyFailing)
	}
	v := vwh(nil).Validating
	mut := WebhookConfig{Mutating: &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: v.ObjectMeta,
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: v.Webhooks[0].Name, Rules: v.Webhooks[0].Rules, SideEffects: v.Webhooks[0].SideEffects,
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "bob", Expression: "request.userInfo.username == 'bob'"}}}}}}
	sum, err = RunWebhooks(context.Background(), WebhookOptions{Writes: newStore(t, writes), Draft: mut, Namespaces: todays})
	if err != nil {
		t.Fatal(err)
	}
	if sum.NewlySent != 1 || sum.Draft.Sent != 1 || sum.Draft.FailsIfUnreachable != 1 {
		t.Errorf("mutating draft: newly sent %d, tally %+v; want 1 sent, failing (the default failurePolicy is Fail)", sum.NewlySent, sum.Draft)
	}
}

// TestWebhookReplayHidesWhatThePersonMayNotList: no change, group or count
// of a resource MayList refuses.
func TestWebhookReplayHidesWhatThePersonMayNotList(t *testing.T) {
	writes := []ledger.Write{cm("alice", "prod", "p1", ledger.OpCreate, 201, "x")}
	sum, err := RunWebhooks(context.Background(), WebhookOptions{Writes: newStore(t, writes), Draft: vwh(nil), Namespaces: todays,
		MayList: func(group, resource string) bool { return resource != "configmaps" }})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Scanned != 1 || sum.Replayed != 0 || sum.NewlySent != 0 || len(sum.Groups) != 0 || len(sum.Changes) != 0 || sum.Draft.Sent != 0 {
		t.Errorf("hidden resource shows: %+v", sum)
	}
}

// TestWebhookBadDraftsRunNoReplay: a selector that does not parse, CEL
// that does not compile, two webhooks of one name, no configuration: a
// BadDraftError naming it, and no write is read.
func TestWebhookBadDraftsRunNoReplay(t *testing.T) {
	for _, tc := range []struct {
		draft WebhookConfig
		want  string
	}{
		{vwh(func(h *admissionregistrationv1.ValidatingWebhook) {
			h.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}
		}), "namespaceSelector"},
		{vwh(func(h *admissionregistrationv1.ValidatingWebhook) {
			h.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
		}), "objectSelector"},
		{vwh(func(h *admissionregistrationv1.ValidatingWebhook) {
			h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "c", Expression: "object.metadata.name =="}}
		}), "matchConditions"},
		{vwh(func(h *admissionregistrationv1.ValidatingWebhook) {
			h.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "c", Expression: "'not a bool'"}}
		}), "matchConditions"},
		{WebhookConfig{}, "no webhook configuration"},
	} {
		s := newStore(t, []ledger.Write{cm("alice", "prod", "p1", ledger.OpCreate, 201, "x")})
		_, err := RunWebhooks(context.Background(), WebhookOptions{Writes: s, Draft: tc.draft})
		var bad *BadDraftError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "draft webhook configuration") || s.scans != 0 {
			t.Errorf("error %v (scans %d), want a BadDraftError saying %q", err, s.scans, tc.want)
		}
	}
	two := vwh(nil)
	two.Validating.Webhooks = append(two.Validating.Webhooks, two.Validating.Webhooks[0])
	if _, err := RunWebhooks(context.Background(), WebhookOptions{Writes: newStore(t, nil), Draft: two}); err == nil || !strings.Contains(err.Error(), "name of its own") {
		t.Errorf("two webhooks of one name: %v", err)
	}
}
