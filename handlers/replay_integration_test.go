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
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/ingest"
	"github.com/clusterdesk/clusterdesk/internal/ingest/ingesttest"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// replayFixture is a deployed policy that admits every CSIDriver named
// after the test, one such write recorded in a ledger of the test's own,
// and a draft of the policy that would have denied it.
type replayFixture struct {
	store ledger.Store
	name  string // the policy's, the binding's and the CSIDriver's
	draft string // the draft's text: policy, ---, binding
	admin kubernetes.Interface
}

func newReplayFixture(t *testing.T) *replayFixture {
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
	name := "replay-page-" + strings.ReplaceAll(time.Now().UTC().Format("150405.000000"), ".", "")
	// Only this test's CSIDrivers match: other tests' writes pass untouched.
	pol := func(expr string) *admissionregistrationv1.ValidatingAdmissionPolicy {
		return &admissionregistrationv1.ValidatingAdmissionPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{"storage.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"csidrivers"}},
					}}}},
				MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "this-test", Expression: "object.metadata.name == '" + name + "'"}},
				Validations:     []admissionregistrationv1.Validation{{Expression: expr, Message: "a team label is required on " + name}},
			}}
	}
	bnd := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
	if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, pol("object.metadata.name != ''"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, bnd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	if _, err := admin.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.StorageV1().CSIDrivers().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	waitFor(t, "the CSIDriver's write to be recorded", 60*time.Second, func() bool {
		found := false
		_ = ws.ScanWrites(ctx, ledger.WriteQuery{}, func(w *ledger.Write) error {
			found = found || (w.Resource == "csidrivers" && w.Name == name && w.Operation == ledger.OpCreate)
			return nil
		})
		return found
	})
	pt, err := yaml.Marshal(pol("has(object.metadata.labels) && 'team' in object.metadata.labels"))
	if err != nil {
		t.Fatal(err)
	}
	bt, err := yaml.Marshal(bnd)
	if err != nil {
		t.Fatal(err)
	}
	return &replayFixture{store: st, name: name, draft: string(pt) + "---\n" + string(bt), admin: admin}
}

// TestReplayPageShowsNewlyDeniedRequestsWithTheirLedgerEntries replays a
// draft that denies a recorded CSIDriver write the deployed policy
// admitted, as a plain form post and with htmx, and opens the page's form;
// a draft whose CEL does not compile shows the engine's error and no result.
func TestReplayPageShowsNewlyDeniedRequestsWithTheirLedgerEntries(t *testing.T) {
	f := newReplayFixture(t)
	ts := newLiveServer(t, testcluster.Admin, true, withLedger(f.store))
	sess := ts.login(t)
	path := urls.PolicyReplay(f.name)
	waitFor(t, "the cache to show the policy", 30*time.Second, func() bool {
		code, _ := ts.getDoc(t, sess, path)
		return code == http.StatusOK
	})
	code, doc := ts.getDoc(t, sess, path)
	if code != http.StatusOK || !strings.Contains(doc.Find("[data-testid=replay-draft]").Text(), "object.metadata.name != ''") {
		t.Fatalf("form: status %d, draft %q", code, doc.Find("[data-testid=replay-draft]").Text())
	}

	for _, hx := range []bool{false, true} {
		rec, doc := replayOutcome(t, &ts.testServer, sess, path, replayForm(f.draft), hx)
		if rec.Code != http.StatusOK {
			t.Fatalf("hx=%v: status %d: %s", hx, rec.Code, doc.Find("[data-testid=replay-error]").Text())
		}
		if hx && doc.Find("[data-testid=replay-form]").Length() != 0 {
			t.Errorf("htmx got the whole page, want the outcome alone")
		}
		if got := doc.Find("[data-testid=replay-newly-denied]").Text(); got != "1" {
			t.Errorf("hx=%v: newly denied %q, want 1", hx, got)
		}
		req := doc.Find("[data-testid=replay-request]")
		if req.Length() != 1 || req.Find("[data-testid=replay-request-what]").Text() != "newly denied" ||
			!strings.Contains(req.Text(), f.name) || !strings.Contains(req.Text(), "a team label is required") {
			t.Fatalf("hx=%v: requests %q", hx, req.Text())
		}
		href, _ := req.Find("[data-testid=replay-request-ledger]").Attr("href")
		if want := urls.LedgerObject(kube.CSIDrivers, f.name, ""); href != want {
			t.Errorf("hx=%v: ledger link %q, want %q", hx, href, want)
		}
	}

	// A draft whose CEL does not compile ends its replay before any write
	// is read, the engine's error its outcome.
	bad := strings.Replace(f.draft, "'team' in object", "'team' inn object", 1)
	rec, doc := replayOutcome(t, &ts.testServer, sess, path, replayForm(bad), false)
	if msg := doc.Find("[data-testid=replay-error]").Text(); rec.Code != http.StatusOK ||
		!strings.Contains(msg, "draft policy cannot be replayed") || doc.Find("[data-testid=replay-result]").Length() != 0 {
		t.Fatalf("bad draft: status %d, error %q", rec.Code, msg)
	}
}

// TestReplayPageHidesRequestsOfResourcesTheUserMayNotList is the attack: a
// user who may read admission policies but not list CSIDrivers replays
// a draft that matches them, to learn who wrote which CSIDriver. The
// page must show them no request and no count of it.
func TestReplayPageHidesRequestsOfResourcesTheUserMayNotList(t *testing.T) {
	f := newReplayFixture(t)
	user := f.name + "-viewer"
	grantUser(t, f.admin, user, []rbacv1.PolicyRule{{
		APIGroups: []string{"admissionregistration.k8s.io"}, Verbs: []string{"get", "list", "watch"},
		Resources: []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings"},
	}}, authorizationv1.ResourceAttributes{Verb: "list", Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"})
	// The console reads the shared cache as itself (admin) and asks the
	// API server as the viewer, as a console serving many people does.
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cfg.Impersonate.UserName = user
	ts := newLiveServerOn(t, sharedCache(t, testcluster.Admin), cfg, user, true, withLedger(f.store))
	sess := ts.login(t)
	path := urls.PolicyReplay(f.name)
	waitFor(t, "the cache to show the policy", 30*time.Second, func() bool {
		code, _ := ts.getDoc(t, sess, path)
		return code == http.StatusOK
	})
	rec, doc := replayOutcome(t, &ts.testServer, sess, path, replayForm(f.draft), false)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, doc.Find("[data-testid=replay-error]").Text())
	}
	// The draft itself is in the form; the outcome must not name the write.
	if n, out := doc.Find("[data-testid=replay-request]").Length(), doc.Find("#replay-outcome").Text(); n != 0 || strings.Contains(out, "a team label is required") {
		t.Errorf("the viewer sees %d requests of CSIDrivers they may not list: %s", n, out)
	}
	if got := doc.Find("[data-testid=replay-newly-denied]").Text(); got != "0" {
		t.Errorf("newly denied = %q, want 0: the counts tell of requests the viewer may not list", got)
	}
}

// TestReplayPageRefusesAForgedPost: the replay's POST changes nothing, but
// it runs work as the victim and shows them what it found; a page of another
// site must not be able to start it (the CSRF guard of every POST).
func TestReplayPageRefusesAForgedPost(t *testing.T) {
	testcluster.Require(t)
	ts := newLiveServer(t, testcluster.Admin, true)
	sess := ts.login(t)
	own := pageCSRFToken(t, ts.e, withCookie(sess))
	for _, fg := range forgeries(own, "another-sessions-token") {
		rec := ts.do(fg.request(urls.PolicyReplay("any"), replayForm("x"), withCookie(sess)))
		if !refusedForCSRF(rec) {
			t.Errorf("%s: status %d, want the CSRF check's 403", fg.name, rec.Code)
		}
	}
}
