//go:build integration

package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/ingest"
	"github.com/clusterdesk/clusterdesk/internal/ingest/ingesttest"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// recordingWebhook serves the devcluster API server's audit webhook into a
// fresh SQLite ledger that records writes, as the console does.
func recordingWebhook(t *testing.T) ledger.WriteStore {
	t.Helper()
	st, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ingesttest.ServeAuditWebhook(t, ingest.Options{Store: st, Writes: st.(ledger.WriteStore)})
	return st.(ledger.WriteStore)
}

// recorded returns the writes recorded in namespace ns.
func recorded(t *testing.T, ws ledger.WriteStore, ns string) []ledger.Write {
	t.Helper()
	var got []ledger.Write
	if err := ws.ScanWrites(context.Background(), ledger.WriteQuery{}, func(w *ledger.Write) error {
		if w.Namespace == ns {
			got = append(got, *w)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// waitRecorded waits until a write of name is recorded in ns and returns it.
func waitRecorded(t *testing.T, ws ledger.WriteStore, ns, name string) ledger.Write {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		for _, w := range recorded(t, ws, ns) {
			if w.Name == name {
				return w
			}
		}
	}
	t.Fatalf("no recorded write of %s/%s within 60 s", ns, name)
	return ledger.Write{}
}

// failureValue is one entry of the API server's
// validation.policy.admission.k8s.io/validation_failure annotation
// (ValidationFailureValue in .../policy/validating/dispatcher.go).
type failureValue struct {
	Policy, Binding string
}

const failureAnnotation = "validation.policy.admission.k8s.io/validation_failure"

// auditedByAPIServer tells whether the API server's annotation names the
// policy and binding.
func auditedByAPIServer(t *testing.T, w *ledger.Write, policy, binding string) bool {
	v, ok := w.Annotations[failureAnnotation]
	if !ok {
		return false
	}
	var fs []failureValue
	if err := json.Unmarshal([]byte(v), &fs); err != nil {
		t.Fatalf("annotation %q: %v", v, err)
	}
	for _, f := range fs {
		if f.Policy == policy && f.Binding == binding {
			return true
		}
	}
	return false
}

// TestReplayAgreesWithTheAPIServersAuditAnnotations deploys a policy with
// validationActions [Audit], makes writes as two users, then replays the
// deployed version over the recorded writes and compares, request by
// request, with the validation_failure annotations the API server wrote
// into the same writes' audit events.
func TestReplayAgreesWithTheAPIServersAuditAnnotations(t *testing.T) {
	testcluster.Require(t)
	ws := recordingWebhook(t)
	ctx := context.Background()
	adminCfg := testcluster.RestConfig(t, testcluster.Admin)
	admin := kubernetes.NewForConfigOrDie(adminCfg)
	as := func(user string) proofClient {
		cfg := *adminCfg
		cfg.Impersonate.UserName, cfg.Impersonate.Groups = user, []string{"system:masters"}
		return proofClient{Interface: kubernetes.NewForConfigOrDie(&cfg), dyn: dynamicFor(t, &cfg)}
	}
	alice, bob := as("dev-alice"), as("dev-bob")

	suffix := strings.ReplaceAll(time.Now().UTC().Format("150405.000000"), ".", "")
	widgets := installWidgets(t, suffix)
	ns, other := "replay-"+suffix, "replay-other-"+suffix
	for _, n := range []string{ns, other} {
		labels := map[string]string{"replay-test": n}
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cleanWorkload(proofClient{Interface: admin, dyn: dynamicFor(t, adminCfg)}, n, widgets)
			testcluster.DeleteNamespace(t, admin, n)
		})
		// Pods need their service account (the devcluster has no
		// controller that makes "default"); made before the probes, so
		// not compared.
		if _, err := admin.CoreV1().ServiceAccounts(n).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	name := "replay-" + suffix
	pol := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				auditRule("", "configmaps", admissionregistrationv1.Create, admissionregistrationv1.Update),
				auditRule("", "pods", admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete),
				auditRule(widgets.Group, widgets.Resource, admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete),
			}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "not-the-root-ca", Expression: "request.name != 'kube-root-ca.crt'"}},
			Validations: append([]admissionregistrationv1.Validation{
				{Expression: "request.operation == 'DELETE' || !has(object.data) || !('mode' in object.data) || object.data.mode != 'forbidden'", Message: "mode forbidden"},
				{Expression: "oldObject == null || object == null || !has(oldObject.data) || !('owner' in oldObject.data) || (has(object.data) && 'owner' in object.data && object.data.owner == oldObject.data.owner)", Message: "owner is immutable"},
				// A DELETE judged on the oldObject the ledger keeps.
				{Expression: "request.operation != 'DELETE' || !has(oldObject.metadata.labels) || !('protected' in oldObject.metadata.labels)", Message: "protected objects are not deleted"},
			}, workloadValidations()...)}}
	bnd := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"replay-test": ns}}}}}
	vap := admin.AdmissionregistrationV1()
	if _, err := vap.ValidatingAdmissionPolicies().Create(ctx, pol, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vap.ValidatingAdmissionPolicies().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if _, err := vap.ValidatingAdmissionPolicyBindings().Create(ctx, bnd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		vap.ValidatingAdmissionPolicyBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	// The API server starts enforcing the binding once its informers have
	// it: probe with dry runs until a probe's audit event carries the
	// annotation. Writes after that are the comparison's.
	for i := 0; ; i++ {
		probe := fmt.Sprintf("probe-%d", i)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: probe, Namespace: ns}, Data: map[string]string{"mode": "forbidden"}}
		if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatal(err)
		}
		w := waitRecorded(t, ws, ns, probe)
		if auditedByAPIServer(t, &w, name, name) {
			break
		}
		if i == 100 {
			t.Fatal("the API server did not enforce the binding after 100 probes")
		}
	}

	// The traffic: two users, creates, merge patches, updates, a delete, in
	// the bound namespace and in another one.
	cms := func(c kubernetes.Interface, n string) func(string, map[string]string) {
		return func(name string, data map[string]string) {
			t.Helper()
			if _, err := c.CoreV1().ConfigMaps(n).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: n}, Data: data}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	patch := func(c kubernetes.Interface, n, name, body string) {
		t.Helper()
		if _, err := c.CoreV1().ConfigMaps(n).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cms(alice, ns)("a1", map[string]string{"mode": "forbidden"})
	cms(alice, ns)("a2", map[string]string{"mode": "fine", "owner": "alice"})
	cms(bob, ns)("b1", map[string]string{"mode": "fine"})
	cms(bob, ns)("b2", map[string]string{"mode": "forbidden", "owner": "bob"})
	cms(bob, other)("o1", map[string]string{"mode": "forbidden"})
	patch(bob, ns, "a2", `{"data":{"owner":"bob"}}`)        // owner changed: audited
	patch(alice, ns, "b1", `{"data":{"mode":"forbidden"}}`) // audited
	patch(alice, ns, "a1", `{"data":{"mode":"fine"}}`)      // fixed: admitted
	patch(bob, ns, "b2", `{"data":{"extra":"x"}}`)          // still forbidden: audited
	patch(alice, other, "o1", `{"data":{"mode":"fine"}}`)   // not bound
	got, err := alice.CoreV1().ConfigMaps(ns).Get(ctx, "a2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Data["owner"] = "alice" // an update (PUT): owner changed back, audited
	if _, err := alice.CoreV1().ConfigMaps(ns).Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := bob.CoreV1().ConfigMaps(ns).Delete(ctx, "b1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Pods and Widgets: creates judged on the pod spec and the widget's
	// size, patches judged with their oldObject, deletes of a protected
	// pod and of a widget.
	podTraffic(t, alice, bob, ns, other)
	widgetTraffic(t, alice, bob, widgets, ns)
	cms(alice, ns)("last", map[string]string{"mode": "fine"})
	waitRecorded(t, ws, ns, "last")

	// Replay the deployed version (as the API server has it) over the
	// window, and a Deny draft of it against it.
	deployedPol, deployedBnd := deployedVersion(t, admin, name)
	todays := todaysNamespaces(t, admin)
	draftBnd := deployedBnd.DeepCopy()
	draftBnd.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}
	var compared, agreed, audited, newlyDenied int
	var disagreements []string
	sum, err := Run(ctx, Options{Writes: ws, Namespaces: todays,
		Draft:    Version{deployedPol, bs(draftBnd)},
		Deployed: &Version{deployedPol, bs(deployedBnd)},
		OnRequest: func(w *ledger.Write, draft, deployed Verdict) {
			if (w.Namespace != ns && w.Namespace != other) || strings.HasPrefix(w.Name, "probe-") {
				return
			}
			compared++
			api := auditedByAPIServer(t, w, name, name)
			if api == deployed.Audited {
				agreed++
			} else {
				disagreements = append(disagreements, fmt.Sprintf("%s %s %s/%s by %s: API server audited %v, replay %v (%s)", w.Operation, w.Verb, w.Namespace, w.Name, w.User, api, deployed.Audited, deployed.Message))
			}
			if api {
				audited++
			}
			if draft.Denied && !deployed.Denied {
				newlyDenied++
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("agreement with the API server's audit annotations: %d of %d requests (%.1f%%), %d audited by the API server; replay of %d writes took %s",
		agreed, compared, 100*float64(agreed)/float64(compared), audited, sum.Scanned, sum.Elapsed)
	for _, d := range disagreements {
		t.Errorf("disagreement: %s", d)
	}
	// 25 writes: the 2 service accounts, 12 ConfigMap writes in the bound
	// namespace and other (the delete included), 5 pod and 5 widget
	// writes, the last one; 11 audited (a1 create, b2 create, a2 owner
	// patch, b1 patch, b2 patch, a2 update; the docker.io pod's create and
	// label patch, keep's delete; the widget of 12, w1 painted).
	if compared != 25 || audited != 11 {
		t.Errorf("compared %d requests, %d audited by the API server; want 25 and 11", compared, audited)
	}
	// The Deny draft denies exactly what the deployed version audited (the
	// probes among them in the summary).
	if newlyDenied != audited || sum.NoLongerDenied != 0 || sum.NewlyDenied < int64(audited) {
		t.Errorf("draft [Deny] against deployed [Audit]: newly denied %d (%d in all), no longer denied %d; want %d and 0", newlyDenied, sum.NewlyDenied, sum.NoLongerDenied, audited)
	}
	users := map[string]bool{}
	for _, g := range sum.Groups {
		users[g.User] = true
	}
	if !users["dev-alice"] || !users["dev-bob"] {
		t.Errorf("groups %+v: want both users", sum.Groups)
	}
}

func auditRule(group, resource string, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.NamedRuleWithOperations {
	return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: ops,
		Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{resource}}}}
}

// podTraffic: alice's pod from registry.example (protected), bob's from
// docker.io in the bound namespace and in other, alice labels bob's (still
// docker.io: audited again), bob deletes alice's protected pod.
func podTraffic(t *testing.T, alice, bob proofClient, ns, other string) {
	t.Helper()
	ctx := context.Background()
	pod := func(c proofClient, n, name, image string, labels map[string]string) {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: n, Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image,
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}}}}}
		if _, err := c.CoreV1().Pods(n).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod(alice, ns, "keep", "registry.example/web:1", map[string]string{"protected": "yes"})
	pod(bob, ns, "hub", "docker.io/library/nginx:1", nil)    // audited
	pod(bob, other, "hub", "docker.io/library/nginx:1", nil) // not bound
	if _, err := alice.CoreV1().Pods(ns).Patch(ctx, "hub", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"tier":"web"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err) // still docker.io: audited
	}
	if err := bob.CoreV1().Pods(ns).Delete(ctx, "keep", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err) // protected: audited
	}
}

// widgetTraffic: alice's widget of 3, bob's of 12, bob paints alice's
// (its colour is fixed), alice grows it to 10, alice deletes bob's.
func widgetTraffic(t *testing.T, alice, bob proofClient, widgets schema.GroupVersionResource, ns string) {
	t.Helper()
	ctx := context.Background()
	create := func(c proofClient, name string, size int64, colour string) {
		t.Helper()
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": widgets.GroupVersion().String(), "kind": "Widget",
			"metadata": map[string]any{"name": name, "namespace": ns}, "spec": map[string]any{"size": size, "colour": colour}}}
		if _, err := c.dyn.Resource(widgets).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch := func(c proofClient, name, body string) {
		t.Helper()
		if _, err := c.dyn.Resource(widgets).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create(alice, "w1", 3, "red")
	create(bob, "w2", 12, "red")                   // audited
	patch(bob, "w1", `{"spec":{"colour":"blue"}}`) // audited
	patch(alice, "w1", `{"spec":{"size":10}}`)
	if err := alice.dyn.Resource(widgets).Namespace(ns).Delete(ctx, "w2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}
