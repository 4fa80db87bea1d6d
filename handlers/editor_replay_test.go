package handlers

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// The YAML editor's "Replay against recorded writes" (issue 45): the
// editor's form posted to its kind's replay route answers the editor again,
// the same text, starting version and write mode, with the replay beside it.

// replayCluster is the shared cache of a console whose editor replays: the
// deployed policies and bindings (by name), and the kinds served as v1.
type replayCluster struct {
	*liveCluster
	objects map[kube.KindID]map[string]runtime.Object
}

func (c *replayCluster) Kind(id kube.KindID) (kube.Kind, bool) {
	k, ok := c.liveCluster.Kind(id)
	k.Version = "v1"
	return k, ok
}

func (c *replayCluster) Get(id kube.KindID, name string) (runtime.Object, error) {
	if o, ok := c.objects[id][name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: string(id)}, name)
}

func (c *replayCluster) List(id kube.KindID) ([]runtime.Object, error) {
	var out []runtime.Object
	for _, o := range c.objects[id] {
		out = append(out, o)
	}
	return out, nil
}

// The deployed policies: admit-all admits every ConfigMap create (bound by
// admit-all-binding, Deny); team-label wants a team label, and its bindings
// team-label-binding only audits, team-label-warn warns.
const (
	admitAllPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: admit-all}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]}
  validations: [{expression: "true"}]
`
	teamLabelPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: team-label}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]}
  validations: [{expression: "has(object.metadata.labels) && 'team' in object.metadata.labels", message: "a team label is required"}]
`
	teamLabelBinding = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: team-label-binding}
spec: {policyName: team-label, validationActions: [Audit]}
`
	teamLabelWarn = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: team-label-warn}
spec: {policyName: team-label, validationActions: [Warn]}
`
)

// editorReplayConsole is a token-mode console of alice and bob with the
// deployed policies above and one recorded write, a ConfigMap without a team
// label created a minute ago; access is what the users may list.
func editorReplayConsole(t *testing.T, access Access, opts ...consoleOption) (ts *testServer, alice *http.Cookie) {
	t.Helper()
	st, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "l.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := ledger.Write{ID: "w1", AuditID: "a1", Time: time.Now().Add(-time.Minute), User: "carol", Verb: "create",
		Operation: ledger.OpCreate, APIVersion: "v1", Resource: "configmaps", Namespace: "prod", Name: "web", Code: 201,
		Object: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"prod","labels":{"app":"web"}}}`)}
	if _, err := st.(ledger.WriteStore).AppendWrites(context.Background(), []ledger.Write{w}); err != nil {
		t.Fatal(err)
	}
	cl := &replayCluster{liveCluster: newLiveCluster(), objects: map[kube.KindID]map[string]runtime.Object{
		kube.AdmissionPolicies: {}, kube.AdmissionPolicyBindings: {}}}
	for _, text := range []string{admitAllPolicy, teamLabelPolicy, teamLabelBinding, teamLabelWarn, strings.ReplaceAll(strings.ReplaceAll(teamLabelBinding,
		"team-label", "admit-all"), "Audit", "Deny")} {
		var o runtime.Object = &admissionregistrationv1.ValidatingAdmissionPolicy{}
		id := kube.AdmissionPolicies
		if strings.Contains(text, "kind: ValidatingAdmissionPolicyBinding") {
			o, id = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, kube.AdmissionPolicyBindings
		}
		if err := yaml.UnmarshalStrict([]byte(text), o); err != nil {
			t.Fatal(err)
		}
		cl.objects[id][o.(interface{ GetName() string }).GetName()] = o
	}
	ts, alice, _ = aliceAndBobConsole(t, Deps{Cluster: cl, Access: access, User: "console", Ledger: st}, opts...)
	return ts, alice
}

// everyReplayKind may list the policy kinds, the webhook configurations and
// the ConfigMaps whose write is recorded.
var everyReplayKind = allowKinds{"validatingadmissionpolicies": true, "validatingadmissionpolicybindings": true,
	"validatingwebhookconfigurations": true, "mutatingwebhookconfigurations": true, "configmaps": true}

// editorForm is the editor's form of an existing object at version "7",
// written with server-side apply, and the replay's window.
func editorForm(text string) url.Values {
	return url.Values{"yaml": {text}, "resourceVersion": {"7"}, "write": {"apply"}, "window": {"1h"}}
}

// editorReplayOutcome posts form to the editor's replay of kind (the
// object name) as sess and checks that the answer is the editor with the
// text, version and write mode intact; when a replay started, it waits
// (bounded) for the job's page and returns its outcome too.
func editorReplayOutcome(t *testing.T, ts *testServer, sess *http.Cookie, kind kube.KindID, name string, form url.Values) (editor, outcome *goquery.Document, code int) {
	t.Helper()
	rec, editor := ts.request(t, sess, http.MethodPost, urls.EditorReplay(kind, name), form, false)
	if got := editor.Find("[data-testid=editor-yaml]").Text(); got != form.Get("yaml") {
		t.Fatalf("status %d: the editor's text is %q, want the text sent", rec.Code, got)
	}
	if name != "" {
		if v, _ := editor.Find("[data-testid=editor-resource-version]").Attr("value"); v != "7" {
			t.Errorf("the starting version is %q, want 7", v)
		}
		if _, ok := editor.Find("[data-testid=editor-write-apply]").Attr("checked"); !ok {
			t.Error("the write mode lost server-side apply")
		}
	}
	outcome = editor
	if job, ok := editor.Find("[data-testid=replay-job]").Attr("data-job-url"); ok {
		waitFor(t, "the replay to end", 20*time.Second, func() bool {
			_, outcome = ts.request(t, sess, http.MethodGet, job, nil, true)
			return outcome.Find("[data-testid=replay-job]").Length() == 0
		})
	}
	return editor, outcome, rec.Code
}

// TestEditorReplaysAPolicyWithItsDeployedBinding: admit-all edited to want
// a team label is replayed with its binding as deployed, and would have
// denied the recorded ConfigMap; the editor keeps the text.
func TestEditorReplaysAPolicyWithItsDeployedBinding(t *testing.T) {
	ts, alice := editorReplayConsole(t, everyReplayKind)
	text := strings.Replace(teamLabelPolicy, "team-label", "admit-all", 1)
	editor, outcome, code := editorReplayOutcome(t, ts, alice, kube.AdmissionPolicies, "admit-all", editorForm(text))
	if code != http.StatusOK || !strings.Contains(editor.Find("[data-testid=editor-replay-basis]").Text(), `binding "admit-all-binding"`) {
		t.Fatalf("status %d, basis %q", code, editor.Find("[data-testid=editor-replay-basis]").Text())
	}
	if sel, _ := editor.Find("[data-testid=editor-replay-window] option[selected]").Attr("value"); sel != "1h" {
		t.Errorf("window %q, want the one chosen", sel)
	}
	if got := outcome.Find("[data-testid=replay-newly-denied]").Text(); got != "1" {
		t.Fatalf("newly denied %q, want 1: %s", got, outcome.Text())
	}
	if req := outcome.Find("[data-testid=replay-request]"); !strings.Contains(req.Text(), "a team label is required") {
		t.Errorf("request %q", req.Text())
	}
}

// TestEditorReplaysABindingWithTheDeployedPolicy: team-label-binding edited
// from Audit to Deny is replayed with team-label as deployed today; a
// binding of a policy the cluster does not have replays nothing.
func TestEditorReplaysABindingWithTheDeployedPolicy(t *testing.T) {
	ts, alice := editorReplayConsole(t, everyReplayKind)
	text := strings.Replace(teamLabelBinding, "Audit", "Deny", 1)
	editor, outcome, code := editorReplayOutcome(t, ts, alice, kube.AdmissionPolicyBindings, "team-label-binding", editorForm(text))
	if basis := editor.Find("[data-testid=editor-replay-basis]").Text(); code != http.StatusOK || !strings.Contains(basis, `policy "team-label" as the cluster runs it today`) {
		t.Fatalf("status %d, basis %q", code, basis)
	}
	if got := outcome.Find("[data-testid=replay-newly-denied]").Text(); got != "1" {
		t.Fatalf("newly denied %q, want 1: %s", got, outcome.Text())
	}

	orphan := strings.Replace(text, "policyName: team-label", "policyName: nowhere", 1)
	editor, _, code = editorReplayOutcome(t, ts, alice, kube.AdmissionPolicyBindings, "", editorForm(orphan))
	if msg := editor.Find("[data-testid=replay-error]").Text(); code != http.StatusUnprocessableEntity ||
		!strings.Contains(msg, `binds the policy "nowhere", which the cluster does not have`) || editor.Find("[data-testid=replay-job]").Length() != 0 {
		t.Fatalf("orphan binding: status %d, error %q", code, msg)
	}
}

// TestEditorReplayRefusesBadText: a text that does not parse, of the wrong
// kind, with CEL that does not compile or a selector that does not parse
// is said beside the text, with the replay page's words, and no write is
// replayed.
func TestEditorReplayRefusesBadText(t *testing.T) {
	ts, alice := editorReplayConsole(t, everyReplayKind)
	for _, c := range []struct{ name, text, want string }{
		{"not YAML", "apiVersion: [", "is not YAML"},
		{"a binding in the policy's editor", teamLabelBinding, "not one ValidatingAdmissionPolicy"},
		{"a misspelt field", strings.Replace(admitAllPolicy, "validations:", "validation:", 1), `unknown field "validation"`},
		{"CEL that does not compile", strings.Replace(teamLabelPolicy, "'team' in", "'team' inn", 1), "draft policy cannot be replayed"},
		{"a selector that does not parse", strings.Replace(admitAllPolicy, "  matchConstraints: {",
			"  matchConstraints: {namespaceSelector: {matchExpressions: [{key: team, operator: Near}]}, ", 1), "draft policy cannot be replayed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, outcome, _ := editorReplayOutcome(t, ts, alice, kube.AdmissionPolicies, "admit-all", editorForm(c.text))
			if msg := outcome.Find("[data-testid=replay-error]").Text(); !strings.Contains(msg, c.want) || outcome.Find("[data-testid=replay-result]").Length() != 0 {
				t.Fatalf("error %q, want %q and no result", msg, c.want)
			}
		})
	}
}

// TestEditorReplaysAWebhookConfigurationBeingCreated: a new validating
// configuration that matches ConfigMaps would newly have been sent the
// recorded write; the answer is the create page with the text.
func TestEditorReplaysAWebhookConfigurationBeingCreated(t *testing.T) {
	ts, alice := editorReplayConsole(t, everyReplayKind)
	for _, k := range []kube.KindID{kube.Webhooks, kube.MutatingWebhooks, kube.AdmissionPolicies, kube.AdmissionPolicyBindings} {
		code, doc := ts.getDoc(t, alice, urls.New(k))
		if action, _ := doc.Find("[data-testid=editor-replay-submit]").Attr("formaction"); code != http.StatusOK || action != urls.EditorReplay(k, "") {
			t.Errorf("%s create page: status %d, replay button's formaction %q", k, code, action)
		}
	}
	text := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: new-hook}
webhooks:
- name: check.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {url: "https://hook.example.com/"}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]
`
	editor, _, code := editorReplayOutcome(t, ts, alice, kube.Webhooks, "", url.Values{"yaml": {text}, "window": {"1h"}})
	if got := editor.Find("[data-testid=replay-newly-sent]").Text(); code != http.StatusOK || got != "1" {
		t.Fatalf("status %d, newly sent %q: %s", code, got, editor.Find("[data-testid=editor-replay-outcome]").Text())
	}
	if editor.Find("[data-testid=editor-title]").Text() != "New ValidatingWebhookConfiguration" {
		t.Errorf("title %q, want the create page's", editor.Find("[data-testid=editor-title]").Text())
	}
}

// TestEditorReplayOfABindingNeedsThePolicies is the attack: a user who may
// list bindings but not policies replays a binding, to learn from its
// verdicts what a policy they may not read does. Refused before anything
// runs, as the policy's own replay page refuses them.
func TestEditorReplayOfABindingNeedsThePolicies(t *testing.T) {
	ts, alice := editorReplayConsole(t, allowKinds{"validatingadmissionpolicybindings": true, "configmaps": true})
	rec, doc := ts.request(t, alice, http.MethodPost, urls.EditorReplay(kube.AdmissionPolicyBindings, "team-label-binding"),
		editorForm(strings.Replace(teamLabelBinding, "Audit", "Deny", 1)), false)
	if rec.Code != http.StatusForbidden || doc.Find("[data-testid=replay-job]").Length() != 0 || doc.Find("[data-testid=replay-error]").Length() != 0 {
		t.Fatalf("status %d, want 403 before any replay: %s", rec.Code, doc.Find("main").Text())
	}
}

// TestEditorReplayRefusesAForgedPost: the replay changes nothing, but it
// runs work as the victim; another site's page must not start it.
func TestEditorReplayRefusesAForgedPost(t *testing.T) {
	ts, alice := editorReplayConsole(t, everyReplayKind)
	own := pageCSRFToken(t, ts.e, withCookie(alice))
	for _, fg := range forgeries(own, "another-sessions-token") {
		rec := ts.do(fg.request(urls.EditorReplay(kube.AdmissionPolicies, "admit-all"), editorForm(admitAllPolicy), withCookie(alice)))
		if !refusedForCSRF(rec) {
			t.Errorf("%s: status %d, want the CSRF check's 403", fg.name, rec.Code)
		}
	}
}

// TestEditorReplayWorksInReadOnlyMode: with --read-only the replay (a
// readPOST) runs, and Apply stays refused.
func TestEditorReplayWorksInReadOnlyMode(t *testing.T) {
	ts, alice := editorReplayConsole(t, everyReplayKind, readOnlyConsole(true))
	_, outcome, code := editorReplayOutcome(t, ts, alice, kube.AdmissionPolicies, "admit-all", editorForm(strings.Replace(teamLabelPolicy, "team-label", "admit-all", 1)))
	if got := outcome.Find("[data-testid=replay-newly-denied]").Text(); code != http.StatusOK || got != "1" {
		t.Fatalf("read-only replay: status %d, newly denied %q", code, got)
	}
	if rec := ts.post(t, alice, urls.EditorOf(urls.Object(kube.AdmissionPolicies, "admit-all")).Apply, editorForm(admitAllPolicy)); rec.Code != http.StatusForbidden {
		t.Errorf("read-only Apply: status %d, want 403", rec.Code)
	}
}
