//go:build integration

package handlers

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/ingest"
	"github.com/clusterdesk/clusterdesk/internal/ingest/ingesttest"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// webhookReplayFixture is a deployed ValidatingWebhookConfiguration whose
// one webhook is sent nothing (its objectSelector selects no object), a
// CSIDriver named after the test whose create is recorded in a ledger of
// the test's own, and the draft: the configuration with the objectSelector
// gone and failurePolicy Fail, which would send that create.
type webhookReplayFixture struct {
	store ledger.Store
	name  string // the configuration's and the CSIDriver's
	draft string
	admin kubernetes.Interface
}

const replayHookName = "check.whreplay.test"

func newWebhookReplayFixture(t *testing.T) *webhookReplayFixture {
	t.Helper()
	testcluster.Require(t)
	st, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws := st.(ledger.WriteStore)
	ingesttest.ServeAuditWebhook(t, ingest.Options{Store: st, Writes: ws})
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	name := "whreplay-page-" + strings.ReplaceAll(time.Now().UTC().Format("150405.000000"), ".", "")
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: replayHookName,
			// Never called: nothing carries the label, and port 1 refuses.
			ClientConfig:  admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/check")},
			FailurePolicy: ptr.To(admissionregistrationv1.Ignore), SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"whreplay": name}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{"storage.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"csidrivers"}},
			}},
			// Only this test's CSIDriver, whatever the draft's selectors.
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "this-test", Expression: "object.metadata.name == '" + name + "'"}},
		}}}
	vwc := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if _, err := vwc.Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vwc.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if _, err := admin.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.StorageV1().CSIDrivers().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	waitFor(t, "the CSIDriver's write to be recorded", 60*time.Second, func() bool {
		found := false
		_ = ws.ScanWrites(ctx, ledger.WriteQuery{}, func(w *ledger.Write) error {
			found = found || (w.Resource == "csidrivers" && w.Name == name && w.Operation == ledger.OpCreate)
			return nil
		})
		return found
	})
	draft := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: ` + name + `
webhooks:
- name: ` + replayHookName + `
  clientConfig: {url: "https://127.0.0.1:1/check"}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1]
  rules: [{operations: [CREATE], apiGroups: [storage.k8s.io], apiVersions: [v1], resources: [csidrivers]}]
  matchConditions: [{name: this-test, expression: "object.metadata.name == '` + name + `'"}]
`
	return &webhookReplayFixture{store: st, name: name, draft: draft, admin: admin}
}

// TestWebhookReplayPageShowsNewlySentRequests opens the form (the deployed
// configuration), replays a draft that would send the recorded CSIDriver
// create to the webhook under Fail, as a plain post and with htmx, and
// finds it newly sent and newly failing, naming the webhook and linking
// the ledger; drafts that do not parse or compile get the error and no
// result. The detail page links the replay.
func TestWebhookReplayPageShowsNewlySentRequests(t *testing.T) {
	f := newWebhookReplayFixture(t)
	ts := newLiveServer(t, testcluster.Admin, true, withLedger(f.store))
	sess := ts.login(t)
	path := urls.ValidatingWebhookReplay(f.name)
	waitFor(t, "the cache to show the configuration", 30*time.Second, func() bool {
		code, _ := ts.getDoc(t, sess, path)
		return code == http.StatusOK
	})
	code, doc := ts.getDoc(t, sess, path)
	if draft := doc.Find("[data-testid=replay-draft]").Text(); code != http.StatusOK || !strings.Contains(draft, "whreplay: "+f.name) || !strings.Contains(draft, replayHookName) {
		t.Fatalf("form: status %d, draft %q", code, draft)
	}
	_, detail := ts.getDoc(t, sess, urls.Object(kube.Webhooks, f.name))
	if href, _ := detail.Find("[data-testid=replay-link]").Attr("href"); href != path {
		t.Errorf("the detail page links %q, want %q", href, path)
	}

	for _, hx := range []bool{false, true} {
		rec, doc := ts.request(t, sess, http.MethodPost, path, replayForm(f.draft), hx)
		if rec.Code != http.StatusOK {
			t.Fatalf("hx=%v: status %d: %s", hx, rec.Code, doc.Find("[data-testid=replay-error]").Text())
		}
		if got := doc.Find("[data-testid=replay-newly-sent]").Text(); got != "1" {
			t.Errorf("hx=%v: newly sent %q, want 1", hx, got)
		}
		if got := doc.Find("[data-testid=replay-newly-failing]").Text(); got != "1" {
			t.Errorf("hx=%v: newly failing %q, want 1", hx, got)
		}
		req := doc.Find("[data-testid=replay-request]")
		if req.Length() != 1 || req.Find("[data-testid=replay-request-what]").Text() != "newly sent, newly failing if unreachable" ||
			!strings.Contains(req.Text(), f.name) || !strings.Contains(req.Text(), "webhook "+replayHookName) || !strings.Contains(req.Text(), "sent (Fail) / not sent") {
			t.Fatalf("hx=%v: requests %q", hx, req.Text())
		}
		href, _ := req.Find("[data-testid=replay-request-ledger]").Attr("href")
		if want := urls.LedgerObject(kube.CSIDrivers, f.name, ""); href != want {
			t.Errorf("hx=%v: ledger link %q, want %q", hx, href, want)
		}
	}

	for _, bad := range []struct{ text, want string }{
		{strings.Replace(f.draft, "== '", "=== '", 1), "draft webhook configuration cannot be replayed: webhook \"" + replayHookName + "\": matchConditions"},
		{strings.Replace(f.draft, "  failurePolicy: Fail\n", "  failurePolicy: Fail\n  objectSelector: {matchExpressions: [{key: a, operator: Near}]}\n", 1), "objectSelector"},
		{strings.Replace(f.draft, "rules:", "rulez:", 1), "rulez"},
		{"webhooks: [", "not YAML"},
		{strings.Replace(f.draft, "kind: ValidatingWebhookConfiguration", "kind: MutatingWebhookConfiguration", 1), "this page replays one ValidatingWebhookConfiguration"},
	} {
		rec, doc := ts.request(t, sess, http.MethodPost, path, replayForm(bad.text), false)
		if msg := doc.Find("[data-testid=replay-error]").Text(); rec.Code != http.StatusUnprocessableEntity ||
			!strings.Contains(msg, bad.want) || doc.Find("[data-testid=replay-result]").Length() != 0 {
			t.Errorf("bad draft: status %d, error %q, want it to say %q", rec.Code, msg, bad.want)
		}
	}
}

// TestWebhookReplayPageHidesRequestsOfResourcesTheUserMayNotList is the
// attack: a user who may read webhook configurations but not list
// CSIDrivers replays a draft that sends them, to learn who wrote which
// CSIDriver. The page must show them no request and no count of it.
func TestWebhookReplayPageHidesRequestsOfResourcesTheUserMayNotList(t *testing.T) {
	f := newWebhookReplayFixture(t)
	user := f.name + "-viewer"
	grantUser(t, f.admin, user, []rbacv1.PolicyRule{{
		APIGroups: []string{"admissionregistration.k8s.io"}, Verbs: []string{"get", "list", "watch"},
		Resources: []string{"validatingwebhookconfigurations"},
	}}, authorizationv1.ResourceAttributes{Verb: "list", Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"})
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cfg.Impersonate.UserName = user
	ts := newLiveServerOn(t, sharedCache(t, testcluster.Admin), cfg, user, true, withLedger(f.store))
	sess := ts.login(t)
	path := urls.ValidatingWebhookReplay(f.name)
	waitFor(t, "the cache to show the configuration", 30*time.Second, func() bool {
		code, _ := ts.getDoc(t, sess, path)
		return code == http.StatusOK
	})
	rec, doc := ts.request(t, sess, http.MethodPost, path, replayForm(f.draft), false)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, doc.Find("[data-testid=replay-error]").Text())
	}
	// The draft names the CSIDriver (its matchCondition); the outcome must
	// not show its request.
	if n, out := doc.Find("[data-testid=replay-request]").Length(), doc.Find("[data-testid=replay-groups]").Text(); n != 0 || strings.Contains(out, f.name) {
		t.Errorf("the viewer sees %d requests of CSIDrivers they may not list: %s", n, out)
	}
	for _, id := range []string{"replay-newly-sent", "replay-newly-failing"} {
		if got := doc.Find("[data-testid=" + id + "]").Text(); got != "0" {
			t.Errorf("%s = %q, want 0: the counts tell of requests the viewer may not list", id, got)
		}
	}
}

// TestWebhookReplayPagesRefuseAForgedPost: as the policy's replay, the
// webhook configurations' POSTs run work as the victim: the CSRF guard.
func TestWebhookReplayPagesRefuseAForgedPost(t *testing.T) {
	testcluster.Require(t)
	ts := newLiveServer(t, testcluster.Admin, true)
	sess := ts.login(t)
	own := pageCSRFToken(t, ts.e, withCookie(sess))
	for _, path := range []string{urls.ValidatingWebhookReplay("any"), urls.MutatingWebhookReplay("any")} {
		for _, fg := range forgeries(own, "another-sessions-token") {
			rec := ts.do(fg.request(path, replayForm("x"), withCookie(sess)))
			if !refusedForCSRF(rec) {
				t.Errorf("%s %s: status %d, want the CSRF check's 403", path, fg.name, rec.Code)
			}
		}
	}
}

// TestMutatingWebhookReplayPageReplaysItsKind: a MutatingWebhookConfiguration's
// page links its replay; the form starts from the deployed configuration
// and replays it unchanged to no change against itself; a validating
// configuration pasted there is refused.
func TestMutatingWebhookReplayPageReplaysItsKind(t *testing.T) {
	testcluster.Require(t)
	st, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	name := "whreplay-mut-" + strings.ReplaceAll(time.Now().UTC().Format("150405.000000"), ".", "")
	mwc := admin.AdmissionregistrationV1().MutatingWebhookConfigurations()
	if _, err := mwc.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: replayHookName,
			ClientConfig:  admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/mutate")},
			FailurePolicy: ptr.To(admissionregistrationv1.Ignore), SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"whreplay": name}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
		}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mwc.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	ts := newLiveServer(t, testcluster.Admin, true, withLedger(st))
	sess := ts.login(t)
	path := urls.MutatingWebhookReplay(name)
	waitFor(t, "the cache to show the configuration", 30*time.Second, func() bool {
		code, _ := ts.getDoc(t, sess, path)
		return code == http.StatusOK
	})
	_, detail := ts.getDoc(t, sess, urls.Object(kube.MutatingWebhooks, name))
	if href, _ := detail.Find("[data-testid=replay-link]").Attr("href"); href != path {
		t.Errorf("the detail page links %q, want %q", href, path)
	}
	_, doc := ts.getDoc(t, sess, path)
	draft := doc.Find("[data-testid=replay-draft]").Text()
	if !strings.Contains(draft, "kind: MutatingWebhookConfiguration") || !strings.Contains(draft, "whreplay: "+name) {
		t.Fatalf("draft %q", draft)
	}
	rec, doc := ts.request(t, sess, http.MethodPost, path, replayForm(draft), false)
	if rec.Code != http.StatusOK || doc.Find("[data-testid=replay-newly-sent]").Text() != "0" ||
		!strings.Contains(doc.Find("[data-testid=replay-deployed]").Text(), "deployed MutatingWebhookConfiguration \""+name+"\"") {
		t.Errorf("unchanged draft: status %d, newly sent %q, %q", rec.Code, doc.Find("[data-testid=replay-newly-sent]").Text(), doc.Find("[data-testid=replay-deployed]").Text())
	}
	validating := strings.Replace(draft, "kind: MutatingWebhookConfiguration", "kind: ValidatingWebhookConfiguration", 1)
	rec, doc = ts.request(t, sess, http.MethodPost, path, replayForm(validating), false)
	if msg := doc.Find("[data-testid=replay-error]").Text(); rec.Code != http.StatusUnprocessableEntity || !strings.Contains(msg, "this page replays one MutatingWebhookConfiguration") {
		t.Errorf("a validating draft on the mutating page: status %d, %q", rec.Code, msg)
	}
}
