//go:build integration

package handlers

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/ingest/ingesttest"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// agreementFixture is a deployed policy whose binding audits the
// CSIDrivers named after the test whose names its params list, two such
// writes recorded (name-a listed, audited by the API server; name-b not),
// and then the params changed to list name-b instead: the replay, with
// today's params, disagrees with the API server on both.
type agreementFixture struct {
	store ledger.Store
	name  string
	admin kubernetes.Interface
}

func newAgreementFixture(t *testing.T) *agreementFixture {
	t.Helper()
	testcluster.Require(t)
	st, ws := ingesttest.RecordingLedger(t)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	name := "agreement-" + strings.ReplaceAll(time.Now().UTC().Format("150405.000000"), ".", "")
	probe := name + "-probe"
	params := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Data: map[string]string{probe: "", name + "-a": ""}}
	if _, err := admin.CoreV1().ConfigMaps("default").Create(ctx, params, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.CoreV1().ConfigMaps("default").Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	pol := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			ParamKind:     &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"storage.k8s.io"}, APIVersions: []string{"v1"}, Resources: []string{"csidrivers"}},
				},
				// This test's objects only, even while the API server still
				// has the policy after the test deleted it and its params.
				ResourceNames: []string{probe, name + "-a", name + "-b"}}}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "this-test", Expression: "object.metadata.name.startsWith('" + name + "')"}},
			Validations:     []admissionregistrationv1.Validation{{Expression: "!(object.metadata.name in params.data)", Message: "a banned name"}},
		}}
	bnd := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ParamRef:          &admissionregistrationv1.ParamRef{Name: name, Namespace: "default", ParameterNotFoundAction: ptr.To(admissionregistrationv1.AllowAction)},
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}}}
	testcluster.DeployPolicy(t, admin, pol, bnd)
	vap := admin.AdmissionregistrationV1()

	// recorded finds the recorded write of a CSIDriver named n with audit
	// ID id, or nil.
	recorded := func(n, id string) *ledger.Write {
		var got *ledger.Write
		_ = ws.ScanWrites(ctx, ledger.WriteQuery{}, func(w *ledger.Write) error {
			if w.Resource == "csidrivers" && w.Name == n && (id == "" || w.AuditID == id) {
				c := *w
				got = &c
			}
			return nil
		})
		return got
	}
	// The API server audits once its informers have the binding: probe
	// with dry runs of the banned probe name until one is annotated.
	probes := 0
	waitFor(t, "the API server to audit the binding", 60*time.Second, func() bool {
		probes++
		id := name + "-probe-" + strconv.Itoa(probes) // its Audit-ID: this probe's write, not an earlier one's
		res := admin.StorageV1().RESTClient().Post().Resource("csidrivers").Param("dryRun", "All").SetHeader("Audit-ID", id).
			Body(&storagev1.CSIDriver{TypeMeta: metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIDriver"}, ObjectMeta: metav1.ObjectMeta{Name: probe}}).Do(ctx)
		if res.Error() != nil {
			t.Fatalf("probe: %v", res.Error())
		}
		var w *ledger.Write
		waitFor(t, "the probe to be recorded", 60*time.Second, func() bool {
			w = recorded(probe, id)
			return w != nil
		})
		_, audited := w.Annotations[replay.FailureAnnotation]
		return audited
	})
	// A label on the binding moves the deployed version's last change past
	// the probes (those before the API server audited would disagree).
	deployedBnd, err := vap.ValidatingAdmissionPolicyBindings().Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"labels":{"probed":"yes"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deployedPol, err := vap.ValidatingAdmissionPolicies().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	since := replay.DeployedSince(deployedPol, deployedBnd)
	waitFor(t, "the deployed version's DeployedSince", 5*time.Second, func() bool { return time.Now().After(since) })
	for _, n := range []string{name + "-a", name + "-b"} {
		if _, err := admin.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = admin.StorageV1().CSIDrivers().Delete(context.Background(), n, metav1.DeleteOptions{}) })
		waitFor(t, n+"'s write to be recorded", 60*time.Second, func() bool { return recorded(n, "") != nil })
	}
	if _, ok := recorded(name+"-a", "").Annotations[replay.FailureAnnotation]; !ok {
		t.Fatalf("the API server did not audit %s-a", name)
	}
	// Today's params ban name-b, not name-a.
	patch := `{"data":{"` + name + `-a":null,"` + name + `-b":""}}`
	if _, err := admin.CoreV1().ConfigMaps("default").Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	return &agreementFixture{store: st, name: name, admin: admin}
}

// TestPolicyPageShowsItsAgreementWithTheAPIServer: the policy's page has
// the section, fetched after the page; the section compares the requests
// since the deployed version and lists the two the params' change makes
// disagree, each with the replay's verdict, the API server's and the
// CSIDriver's ledger history.
func TestPolicyPageShowsItsAgreementWithTheAPIServer(t *testing.T) {
	f := newAgreementFixture(t)
	ts := newLiveServer(t, testcluster.Admin, true, withLedger(f.store))
	sess := ts.login(t)
	policyPage := urls.Object(string(kube.AdmissionPolicies), f.name)
	waitFor(t, "the cache to show the policy and its binding", 30*time.Second, func() bool {
		code, doc := ts.getDoc(t, sess, policyPage)
		return code == http.StatusOK && doc.Find(`[data-testid="policy-agreement"] [data-testid="load-follow"]`).Length() == 1
	})
	_, doc := ts.getDoc(t, sess, policyPage)
	if href, _ := doc.Find(`[data-testid="policy-agreement"] [data-testid="load-follow"]`).Attr("hx-get"); href != urls.PolicyAgreement(f.name) {
		t.Errorf("the section fetches %q, want %q", href, urls.PolicyAgreement(f.name))
	}

	for _, hx := range []bool{true, false} {
		rec, doc := ts.request(t, sess, http.MethodGet, urls.PolicyAgreement(f.name), nil, hx)
		sec := doc.Find(`[data-testid="policy-agreement"]`)
		if rec.Code != http.StatusOK || sec.Length() != 1 || sec.Find(`[data-testid="load-follow"]`).Length() != 0 {
			t.Fatalf("hx=%v: status %d, section %q", hx, rec.Code, sec.Text())
		}
		if hx != (doc.Find("nav").Length() == 0) {
			t.Errorf("hx=%v: the page's chrome is there: %v", hx, doc.Find("nav").Length() != 0)
		}
		field := func(label string) string {
			return strings.TrimSpace(sec.Find(`[data-testid="field-` + label + `"] dd`).Children().First().Text())
		}
		rows := sec.Find(`[data-testid="agreement-disagreement"]`)
		if rows.Length() != 2 || field("disagreeing") != "2" {
			t.Fatalf("hx=%v: %d disagreements listed, %q counted: %s", hx, rows.Length(), field("disagreeing"), sec.Text())
		}
		t.Logf("hx=%v: compared %s, agreeing %s (%s)", hx, field("requests-compared"), field("agreeing"), field("agreement"))
		for i, want := range []struct{ name, replay, api string }{
			{f.name + "-a", "admitted", "audited"},
			{f.name + "-b", "audited", "not audited"},
		} {
			cells := rows.Eq(i).Find("td")
			if !strings.Contains(cells.Eq(1).Text(), "CREATE csidrivers.storage.k8s.io "+want.name) || !strings.Contains(cells.Eq(1).Text(), "by ") ||
				!strings.HasPrefix(strings.TrimSpace(cells.Eq(3).Text()), want.replay) || !strings.HasPrefix(strings.TrimSpace(cells.Eq(4).Text()), want.api) {
				t.Errorf("hx=%v: disagreement %d: %q", hx, i, rows.Eq(i).Text())
			}
			if href, _ := cells.Eq(0).Find("a").Attr("href"); href != urls.LedgerObject(kube.CSIDrivers, want.name, "") {
				t.Errorf("hx=%v: disagreement %d links %q", hx, i, href)
			}
		}
	}
}

// TestPolicyAgreementHidesRequestsOfResourcesTheUserMayNotList is the
// attack: a user who may read admission policies (and the params'
// ConfigMaps and the namespaces) but not list CSIDrivers opens the policy's
// agreement to learn who wrote which CSIDriver. The section must compare
// and list none of those requests (it still compares those of the
// resources they may list: the params' ConfigMap's change).
func TestPolicyAgreementHidesRequestsOfResourcesTheUserMayNotList(t *testing.T) {
	f := newAgreementFixture(t)
	user := f.name + "-viewer"
	grantUser(t, f.admin, user, []rbacv1.PolicyRule{
		{APIGroups: []string{"admissionregistration.k8s.io"}, Verbs: []string{"get", "list", "watch"},
			Resources: []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings"}},
		{APIGroups: []string{""}, Verbs: []string{"get", "list"}, Resources: []string{"configmaps", "namespaces"}},
	}, authorizationv1.ResourceAttributes{Verb: "list", Resource: "namespaces"})
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cfg.Impersonate.UserName = user
	ts := newLiveServerOn(t, sharedCache(t, testcluster.Admin), cfg, user, true, withLedger(f.store))
	sess := ts.login(t)
	path := urls.PolicyAgreement(f.name)
	waitFor(t, "the cache to show the policy", 30*time.Second, func() bool {
		code, _ := ts.getDoc(t, sess, path)
		return code == http.StatusOK
	})
	rec, doc := ts.request(t, sess, http.MethodGet, path, nil, true)
	sec := doc.Find(`[data-testid="policy-agreement"]`)
	if rec.Code != http.StatusOK || sec.Length() != 1 {
		t.Fatalf("status %d: %s", rec.Code, doc.Text())
	}
	if n := sec.Find(`[data-testid="agreement-disagreement"]`).Length(); n != 0 || strings.Contains(sec.Text(), f.name+"-a") || strings.Contains(sec.Text(), f.name+"-b") {
		t.Errorf("the viewer sees %d disagreements about CSIDrivers they may not list: %s", n, sec.Text())
	}
	if got := strings.TrimSpace(sec.Find(`[data-testid="field-disagreeing"] dd`).Text()); got != "0" {
		t.Errorf("disagreeing = %q, want 0: the counts tell of requests the viewer may not list (%s)", got, sec.Text())
	}
}

// grantUser gives user a ClusterRole of rules until the test ends, and
// waits until the API server authorizes probe for them.
func grantUser(t *testing.T, admin kubernetes.Interface, user string, rules []rbacv1.PolicyRule, probe authorizationv1.ResourceAttributes) {
	t.Helper()
	ctx := context.Background()
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.RbacV1().ClusterRoles().Delete(context.Background(), user, metav1.DeleteOptions{}) })
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}}}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.RbacV1().ClusterRoleBindings().Delete(context.Background(), user, metav1.DeleteOptions{})
	})
	waitFor(t, "RBAC to grant "+user+" its role", 30*time.Second, func() bool {
		r, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, ResourceAttributes: &probe}}, metav1.CreateOptions{})
		return err == nil && r.Status.Allowed
	})
}
