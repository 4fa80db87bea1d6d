//go:build integration

package replay

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// The apply-for-real proof of the replay (issue 45): the traffic of a few
// people and a service account is recorded; a tightened draft is replayed
// over it; then the draft is applied for real with [Deny, Audit] and the same
// traffic is sent again, by the same users, to the same objects in a fresh
// namespace. What the API server then refuses must be what the replay said
// it would refuse, request by request.

// auditIDKey carries the Audit-ID a request is sent with: the API server
// takes a client's Audit-ID header as the request's audit ID
// (k8s.io/apiserver/pkg/endpoints/filters/audit_init.go), so each step's
// recorded write is found by it.
type auditIDKey struct{}

type auditIDTransport struct{ rt http.RoundTripper }

func (a auditIDTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if id, ok := r.Context().Value(auditIDKey{}).(string); ok {
		r = r.Clone(r.Context())
		r.Header.Set("Audit-ID", id)
	}
	return a.rt.RoundTrip(r)
}

// bypassUser is left out by the draft's matchConditions: it repeats a
// write the applied draft refused, so that the next step finds the objects
// as the recorded traffic did.
const bypassUser = "replayproof-bypass"

// proofStep is one write of the traffic, in the phase's namespace ns (the
// steps' objects are named the same in both phases).
type proofStep struct {
	what   string
	user   string
	groups []string
	// plain: the user is impersonated without system:masters (RBAC
	// decides for them).
	plain bool
	// denied is what the test's author expects the draft to do.
	denied bool
	// refused, when set, is the API server's refusal of the step in both
	// phases, for another reason than the policy (in its error); replay is
	// then the Skip* reason the replay gives its recorded write: no verdict
	// is counted for a write no policy saw.
	refused, replay string
	do              func(ctx context.Context, c proofClient, ns string) error
}

// proofClient writes as one user: typed, and dynamic for the Widgets.
type proofClient struct {
	kubernetes.Interface
	dyn dynamic.Interface
}

func dynamicFor(t *testing.T, cfg *rest.Config) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// proofPolicy is the draft: a tightened policy for ConfigMaps,
// Deployments, Namespaces, Pods and Widgets labelled replayproof=suffix,
// outside namespaces labelled exempt, bound with [Deny, Audit]; its
// validations read the object, the old object, the user and the operation.
func proofPolicy(name, suffix string, widgets schema.GroupVersionResource) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete}
	rule := func(group, resource string, ops []admissionregistrationv1.OperationType) admissionregistrationv1.NamedRuleWithOperations {
		return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: ops,
			Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{resource}}}}
	}
	pol := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				rule("", "configmaps", ops), rule("", "namespaces", ops),
				rule("apps", "deployments", ops[:2]),
				rule("", "pods", ops), rule(widgets.Group, widgets.Resource, ops),
			}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "not-the-bypass", Expression: "request.userInfo.username != '" + bypassUser + "'"}},
			Validations: []admissionregistrationv1.Validation{
				{Expression: "request.operation == 'DELETE' || object.kind != 'ConfigMap' || !has(object.data) || !('mode' in object.data) || object.data.mode != 'forbidden'",
					Message: "mode forbidden"},
				{Expression: "request.operation != 'UPDATE' || object.kind != 'ConfigMap' || !has(oldObject.data) || !('owner' in oldObject.data) || (has(object.data) && 'owner' in object.data && object.data.owner == oldObject.data.owner)",
					Message: "owner is immutable"},
				{Expression: "request.operation == 'DELETE' || object.kind != 'Deployment' || object.spec.replicas <= 3",
					MessageExpression: "'at most 3 replicas, not ' + string(object.spec.replicas)"},
				{Expression: "request.operation != 'UPDATE' || object.kind != 'Deployment' || object.spec.template.metadata.labels == oldObject.spec.template.metadata.labels",
					Message: "a Deployment's pod labels are fixed"},
				{Expression: "request.operation == 'DELETE' || object.kind != 'Namespace' || (has(object.metadata.labels) && 'team' in object.metadata.labels)",
					Message: "a namespace needs a team label"},
				{Expression: "!request.userInfo.username.startsWith('system:serviceaccount:') || request.operation == 'DELETE' || !object.metadata.name.startsWith('admin-')",
					Message: "service accounts write no admin- objects"},
				{Expression: "request.operation != 'DELETE' || !has(oldObject.metadata.labels) || !('protected' in oldObject.metadata.labels)",
					Message: "protected objects are not deleted"},
			}}}
	pol.Spec.Validations = append(pol.Spec.Validations, workloadValidations()...)
	bnd := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny, admissionregistrationv1.Audit},
			MatchResources: &admissionregistrationv1.MatchResources{ObjectSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"replayproof": suffix}},
				// Today's labels of the namespaces decide, in the replay
				// as in the API server.
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "exempt", Operator: metav1.LabelSelectorOpDoesNotExist}}}}}}
	return pol, bnd
}

// proofExemptBinding is the draft's second binding of the policy: where
// the first leaves the namespaces labelled exempt out, it warns and audits
// (the API server evaluates the policy once per binding, each with its own
// matchResources and actions).
func proofExemptBinding(name, suffix string) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name + "-exempt"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn, admissionregistrationv1.Audit},
			MatchResources: &admissionregistrationv1.MatchResources{ObjectSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"replayproof": suffix}},
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "exempt", Operator: metav1.LabelSelectorOpExists}}}}}}
}

// proofTraffic is the traffic: creates, merge and strategic patches, an
// update, a server-side apply that creates, deletes, a dry run, namespaces
// and an unlabelled object, by two people and a service account; then an
// exempt namespace's, and Pods and Widgets (workloadTraffic).
func proofTraffic(suffix string, widgets schema.GroupVersionResource) []proofStep {
	u := theProofUsers
	alice, bob, deployer, saGroups := u.alice, u.bob, u.deployer, u.saGroups
	labels := func(extra ...string) map[string]string { return proofLabels(suffix, extra...) }
	cm := func(ns, name string, l map[string]string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: l}, Data: data}
	}
	deployment := func(ns, name string, replicas int32) *appsv1.Deployment {
		pod := map[string]string{"app": name}
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels()},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: pod},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: pod},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1"}}}}}}
	}
	create := metav1.CreateOptions{}
	patch := func(c proofClient, ctx context.Context, ns, name, body string) error {
		_, err := c.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
		return err
	}
	steps := []proofStep{
		{what: "alice creates the namespace without a team label", user: alice, denied: true,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels()}}, create)
				return err
			}},
		{what: "bob labels the namespace's team", user: bob,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.CoreV1().Namespaces().Patch(ctx, ns, types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"team":"web"}}}`), metav1.PatchOptions{})
				return err
			}},
		{what: "the deployer creates a Deployment of 2", user: deployer, groups: saGroups,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.AppsV1().Deployments(ns).Create(ctx, deployment(ns, "web", 2), create)
				return err
			}},
		{what: "the deployer scales it to 5", user: deployer, groups: saGroups, denied: true,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.AppsV1().Deployments(ns).Patch(ctx, "web", types.StrategicMergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{})
				return err
			}},
		{what: "the deployer scales it to 3", user: deployer, groups: saGroups,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.AppsV1().Deployments(ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
				return err
			}},
		// The scale subresource's write is a Scale: the next Deployment
		// write is judged on the Deployment before it, not on the Scale.
		{what: "the deployer scales it to 2 through its scale subresource", user: deployer, groups: saGroups,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.AppsV1().Deployments(ns).Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}, "scale")
				return err
			}},
		{what: "alice sets web's image", user: alice,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.AppsV1().Deployments(ns).Patch(ctx, "web", types.StrategicMergePatchType, []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"registry.example/web:2"}]}}}}`), metav1.PatchOptions{})
				return err
			}},
		{what: "bob relabels web's pods", user: bob, denied: true,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.AppsV1().Deployments(ns).Patch(ctx, "web", types.StrategicMergePatchType, []byte(`{"spec":{"template":{"metadata":{"labels":{"tier":"x"}}}}}`), metav1.PatchOptions{})
				return err
			}},
		{what: "bob creates a Deployment of 4", user: bob, denied: true,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.AppsV1().Deployments(ns).Create(ctx, deployment(ns, "big", 4), create)
				return err
			}},
		{what: "alice creates settings, owner alice", user: alice,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "settings", labels(), map[string]string{"mode": "fine", "owner": "alice"}), create)
				return err
			}},
		{what: "bob makes himself settings' owner", user: bob, denied: true,
			do: func(ctx context.Context, c proofClient, ns string) error {
				return patch(c, ctx, ns, "settings", `{"data":{"owner":"bob"}}`)
			}},
		{what: "alice updates settings to mode forbidden", user: alice, denied: true,
			do: func(ctx context.Context, c proofClient, ns string) error {
				got, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
				if err != nil {
					return err
				}
				got.Data["mode"] = "forbidden"
				_, err = c.CoreV1().ConfigMaps(ns).Update(ctx, got, metav1.UpdateOptions{})
				return err
			}},
		{what: "bob adds a key to settings, still mode forbidden", user: bob, denied: true,
			do: func(ctx context.Context, c proofClient, ns string) error {
				return patch(c, ctx, ns, "settings", `{"data":{"extra":"x"}}`)
			}},
		{what: "alice sets settings back to mode fine", user: alice,
			do: func(ctx context.Context, c proofClient, ns string) error {
				return patch(c, ctx, ns, "settings", `{"data":{"mode":"fine"}}`)
			}},
		{what: "bob adds another key to settings", user: bob,
			do: func(ctx context.Context, c proofClient, ns string) error {
				return patch(c, ctx, ns, "settings", `{"data":{"more":"y"}}`)
			}},
		{what: "the deployer creates admin-x", user: deployer, groups: saGroups, denied: true,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "admin-x", labels(), nil), create)
				return err
			}},
		{what: "alice creates admin-y, protected", user: alice,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "admin-y", labels("protected", "yes"), nil), create)
				return err
			}},
		{what: "bob deletes admin-y", user: bob, denied: true,
			do: func(ctx context.Context, c proofClient, ns string) error {
				return c.CoreV1().ConfigMaps(ns).Delete(ctx, "admin-y", metav1.DeleteOptions{})
			}},
		{what: "bob tries mode forbidden in a dry run", user: bob, denied: true,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "trial", labels(), map[string]string{"mode": "forbidden"}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			}},
		{what: "alice creates plain", user: alice,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "plain", labels(), nil), create)
				return err
			}},
		{what: "alice deletes plain", user: alice,
			do: func(ctx context.Context, c proofClient, ns string) error {
				return c.CoreV1().ConfigMaps(ns).Delete(ctx, "plain", metav1.DeleteOptions{})
			}},
		{what: "alice creates an unlabelled ConfigMap, mode forbidden", user: alice,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "unlabelled", nil, map[string]string{"mode": "forbidden"}), create)
				return err
			}},
		{what: "bob applies (server-side) a new ConfigMap, mode forbidden", user: bob, denied: true,
			do: func(ctx context.Context, c proofClient, ns string) error {
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied","namespace":%q,"labels":{"replayproof":%q}},"data":{"mode":"forbidden"}}`, ns, suffix)
				_, err := c.CoreV1().ConfigMaps(ns).Patch(ctx, "applied", types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "bob-apply"})
				return err
			}},
		{what: "the deployer creates a second namespace with a team", user: deployer, groups: saGroups,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-b", Labels: labels("team", "ci")}}, create)
				return err
			}},
	}
	steps = append(steps, exemptTraffic(suffix, u)...)
	return append(steps, workloadTraffic(suffix, widgets, u)...)
}

// proofLabels are the labels the draft's objectSelector matches, and the
// pairs of extra.
func proofLabels(suffix string, extra ...string) map[string]string {
	l := map[string]string{"replayproof": suffix}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	return l
}

// proofClients impersonate each step's user (system:masters added but for
// a plain step's: RBAC lets every write through, so that admission alone
// decides).
type proofClients struct {
	t  *testing.T
	by map[string]proofClient
	// warnedBy are the policy's warnings the API server answered, by the
	// Audit-ID of the request (policyWarnings).
	warnedBy policyWarnings
}

// policyWarnings records the API server's warnings of ValidatingAdmissionPolicy
// "policy" (validating/dispatcher.go: "Validation failed for
// ValidatingAdmissionPolicy '...' with binding '...'") by the request's
// Audit-ID, which the request's context carries.
type policyWarnings struct {
	policy string
	mu     *sync.Mutex
	by     map[string][]string
}

func (w policyWarnings) HandleWarningHeaderWithContext(ctx context.Context, _ int, _ string, text string) {
	id, ok := ctx.Value(auditIDKey{}).(string)
	if !ok || !strings.Contains(text, "ValidatingAdmissionPolicy '"+w.policy+"'") {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.by[id] = append(w.by[id], text)
}

func (w policyWarnings) of(id string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.by[id]
}

func (p *proofClients) as(user string, groups []string, plain bool) proofClient {
	key := fmt.Sprintf("%s|%s|%v", user, strings.Join(groups, ","), plain)
	if c, ok := p.by[key]; ok {
		return c
	}
	cfg := testcluster.RestConfig(p.t, testcluster.Admin)
	cfg.Impersonate.UserName, cfg.Impersonate.Groups = user, append(append([]string{}, groups...), "system:authenticated")
	if !plain {
		cfg.Impersonate.Groups = append(cfg.Impersonate.Groups, "system:masters")
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return auditIDTransport{rt} })
	if p.warnedBy.by != nil {
		cfg.WarningHandlerWithContext = p.warnedBy
	}
	c := proofClient{Interface: kubernetes.NewForConfigOrDie(cfg), dyn: dynamicFor(p.t, cfg)}
	p.by[key] = c
	return c
}

// refusedAsExpected tells whether err is step s's expected refusal (not
// the policy's).
func refusedAsExpected(s proofStep, policy string, err error) bool {
	return err != nil && strings.Contains(err.Error(), s.refused) && !strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+policy+"'")
}

// deniedBy tells whether err is the policy's refusal; any other error fails
// the test: the traffic is meant to reach admission.
func deniedBy(t *testing.T, policy, what string, err error) bool {
	t.Helper()
	switch {
	case err == nil:
		return false
	case (apierrors.IsInvalid(err) || apierrors.IsForbidden(err)) && strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+policy+"'"):
		return true
	}
	t.Fatalf("%s: %v (not the policy's refusal)", what, err)
	return false
}

// TestReplayPredictsWhatTheAppliedDraftDenies is the proof.
func TestReplayPredictsWhatTheAppliedDraftDenies(t *testing.T) {
	testcluster.Require(t)
	ws := recordingWebhook(t)
	ctx := context.Background()
	suffix := strings.ReplaceAll(time.Now().UTC().Format("150405.000000"), ".", "")
	name := "replayproof-" + suffix
	clients := &proofClients{t: t, by: map[string]proofClient{}, warnedBy: policyWarnings{policy: name, mu: &sync.Mutex{}, by: map[string][]string{}}}
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	bypass := clients.as(bypassUser, nil, false)
	recordedNS, appliedNS := name+"-rec", name+"-app"
	widgets := installWidgets(t, suffix)
	steps := proofTraffic(suffix, widgets)
	// Clean up what the steps made, as the bypass (the policy may still be
	// enforced), then the namespaces; cleanups run last first, so these
	// run after the policy is deleted and before the CRD is.
	for _, ns := range []string{recordedNS, appliedNS} {
		t.Cleanup(func() {
			for _, n := range []string{ns, ns + "-b", ns + "-x"} {
				cms, _ := bypass.CoreV1().ConfigMaps(n).List(context.Background(), metav1.ListOptions{})
				for _, c := range cms.Items {
					_ = bypass.CoreV1().ConfigMaps(n).Delete(context.Background(), c.Name, metav1.DeleteOptions{})
				}
				_ = bypass.AppsV1().Deployments(n).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
				cleanWorkload(bypass, n, widgets)
				testcluster.DeleteNamespace(t, admin, n)
			}
		})
	}

	// Phase 1: the traffic, recorded; no version of the policy is deployed.
	since := time.Now().Add(-time.Second)
	stepOf := map[string]int{}
	for i, s := range steps {
		id := fmt.Sprintf("%s-rec-%02d", name, i)
		stepOf[id] = i
		err := s.do(context.WithValue(ctx, auditIDKey{}, id), clients.as(s.user, s.groups, s.plain), recordedNS)
		if s.refused != "" && !refusedAsExpected(s, name, err) {
			t.Fatalf("recorded traffic, step %d (%s): %v, want refused with %q", i, s.what, err, s.refused)
		} else if s.refused == "" && err != nil {
			t.Fatalf("recorded traffic, step %d (%s): %v", i, s.what, err)
		}
	}
	recordedSteps := map[int]ledger.Write{}
	waitFor(t, "every step's write to be recorded", func() bool {
		_ = ws.ScanWrites(ctx, ledger.WriteQuery{Since: since}, func(w *ledger.Write) error {
			if i, ok := stepOf[w.AuditID]; ok {
				recordedSteps[i] = *w
			}
			return nil
		})
		return len(recordedSteps) == len(steps)
	})

	// The replay of the draft over the recorded traffic: its predictions.
	pol, bnd := proofPolicy(name, suffix, widgets)
	exempt := proofExemptBinding(name, suffix)
	todays := todaysNamespaces(t, admin)
	predicted := make([]*Verdict, len(steps))
	sum, err := Run(ctx, Options{Writes: ws, Window: ledger.WriteQuery{Since: since}, Namespaces: todays,
		Draft: Version{pol, bs(bnd, exempt)},
		OnRequest: func(w *ledger.Write, draft, _ Verdict) {
			if i, ok := stepOf[w.AuditID]; ok {
				predicted[i] = &draft
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	skippedSteps := 0
	for i, p := range predicted {
		s, w := steps[i], recordedSteps[i]
		switch {
		case s.refused != "":
			// A write refused before the policies is recorded (its code,
			// its refusal) and not replayed: it counts in the skips only.
			reason := skip(&w)
			if p != nil || reason != s.replay || sum.Skipped[reason] == 0 {
				t.Fatalf("step %d (%s), recorded with code %d (%q): replayed %v, skipped as %q (%v), want skipped as %q", i, s.what, w.Code, w.Refusal, p != nil, reason, sum.Skipped, s.replay)
			}
			skippedSteps++
		case p == nil:
			t.Fatalf("step %d (%s): the replay evaluated no write of it (skipped %v)", i, s.what, sum.Skipped)
		}
	}

	// Phase 2: the draft applied for real, with [Deny, Audit] and the
	// exempt namespaces' [Warn, Audit].
	testcluster.DeployPolicy(t, admin, pol, bnd)
	if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, exempt, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(context.Background(), exempt.Name, metav1.DeleteOptions{})
	})
	// The API server enforces the binding once its informers have it:
	// probe with a dry run it must refuse.
	waitFor(t, "the API server to enforce the applied draft", func() bool {
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: recordedNS, Labels: map[string]string{"replayproof": suffix}},
			Data: map[string]string{"mode": "forbidden"}}
		_, err := admin.CoreV1().ConfigMaps(recordedNS).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && deniedBy(t, name, "probe", err)
	})
	// And the exempt binding, once a dry run in an exempt namespace warns.
	waitFor(t, "the API server to warn under the applied exempt binding", func() bool {
		id := fmt.Sprintf("%s-probe-%d", name, time.Now().UnixNano())
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: recordedNS + "-x", Labels: map[string]string{"replayproof": suffix}},
			Data: map[string]string{"mode": "forbidden"}}
		_, err := clients.as("replayproof-probe", nil, false).CoreV1().ConfigMaps(recordedNS+"-x").Create(context.WithValue(ctx, auditIDKey{}, id), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && len(clients.warnedBy.of(id)) > 0
	})

	// The applied binding also audits (the API server annotates a failed
	// validation under Audit even when Deny refuses the request), so the
	// traffic below is also Agree's on the real annotations: from the
	// deployed version's DeployedSince on.
	deployedPol, deployedBnd := deployedVersion(t, admin, name)
	deployedExempt, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Get(ctx, exempt.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the deployed version's DeployedSince", func() bool {
		return time.Now().After(DeployedSince(deployedPol, deployedBnd)) && time.Now().After(DeployedSince(deployedPol, deployedExempt))
	})
	appliedSince := time.Now()

	// The same traffic again, by the same users, to the same objects in a
	// fresh namespace; a refused write is then made by the bypass, so that
	// each step meets the objects as the recorded one did.
	agreed, denied, refused, warned := 0, 0, 0, 0
	appliedIDs := map[string]bool{}
	for i, s := range steps {
		id := fmt.Sprintf("%s-app-%02d", name, i)
		appliedIDs[id] = true
		err := s.do(context.WithValue(ctx, auditIDKey{}, id), clients.as(s.user, s.groups, s.plain), appliedNS)
		if s.refused != "" {
			// Refused again for its own reason, whatever the policy says:
			// the policy never judged it.
			if !refusedAsExpected(s, name, err) {
				t.Errorf("step %d (%s): %v, want refused with %q", i, s.what, err, s.refused)
			}
			refused++
			continue
		}
		actual := deniedBy(t, name, s.what, err)
		if actual {
			denied++
			if err := s.do(ctx, bypass, appliedNS); err != nil {
				t.Fatalf("step %d (%s) by the bypass: %v", i, s.what, err)
			}
		}
		p := predicted[i]
		// The policy's warnings of the step's request: the exempt binding's
		// Warn (the first binding only denies and audits).
		actualWarned := len(clients.warnedBy.of(id)) > 0
		warned += int(b2i(actualWarned))
		if p.Denied == actual && p.Warned == actualWarned {
			agreed++
		} else {
			t.Errorf("step %d (%s): the replay predicted denied=%v warned=%v (%s), the API server denied=%v (%v) warned=%v (%q)", i, s.what,
				p.Denied, p.Warned, p.State(), actual, err, actualWarned, clients.warnedBy.of(id))
		}
		if actual != s.denied {
			t.Errorf("step %d (%s): denied=%v, the test expects %v: the draft is not the one the test means", i, s.what, actual, s.denied)
		}
	}
	t.Logf("the replay's predictions agree with the API server's outcomes once the draft is applied on %d of %d requests (%d denied, %d admitted, %d warned); "+
		"%d more refused before the policy, in both phases (%d skipped by the replay); the replay read %d recorded writes in %s",
		agreed, len(steps)-refused, denied, len(steps)-refused-denied, warned, refused, skippedSteps, sum.Scanned, sum.Elapsed)
	if warned == 0 {
		t.Error("no step was warned: the exempt binding is not covered")
	}

	// Agree over the applied traffic: the deployed version's replay against
	// the API server's validation_failure annotations. Refused patches are
	// not compared (their object was not recorded); the bypass's writes are
	// compared, matched by nothing.
	waitFor(t, "the applied traffic to be recorded", func() bool {
		n := 0
		_ = ws.ScanWrites(ctx, ledger.WriteQuery{Since: appliedSince}, func(w *ledger.Write) error {
			if appliedIDs[w.AuditID] {
				n++
			}
			return nil
		})
		return n == len(steps)
	})
	// Today's namespaces now: the applied phase made its own.
	a, err := Agree(ctx, AgreementOptions{Writes: ws, Policy: deployedPol, Bindings: []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{deployedBnd, deployedExempt},
		Since: appliedSince, Namespaces: todaysNamespaces(t, admin)})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Bindings) != 2 || a.Bindings[1].Binding != exempt.Name || a.Bindings[1].AuditedByAPIServer == 0 {
		t.Errorf("the exempt binding's comparison: %+v", a.Bindings)
	}
	for _, b := range a.Bindings {
		t.Logf("Agree over the applied traffic, binding %s: %d of %d requests agree with the API server's annotations (%d annotated by it, %d audited by the replay)",
			b.Binding, b.Agreed, b.Compared, b.AuditedByAPIServer, b.AuditedByReplay)
	}
	// The writes refused before the policies (RBAC's, the schema's) are
	// skipped here too: the policy never judged them, nothing to compare.
	for _, d := range a.Disagreements {
		t.Errorf("disagreement: %s %s %s/%s by %s (%d): replay %s (%s), API server audited %v (%s)", d.Operation, d.Resource, d.Namespace, d.Name, d.User, d.Code, d.Replay, d.ReplayMessage, d.APIServer, d.APIServerMessage)
	}
	if a.Bindings[0].Compared < int64(len(steps)-skippedSteps) || a.Bindings[0].AuditedByAPIServer == 0 || a.Unreadable != 0 {
		t.Errorf("compared %d requests, %d annotated by the API server, %d unreadable: want at least %d compared and some annotated", a.Bindings[0].Compared, a.Bindings[0].AuditedByAPIServer, a.Unreadable, len(steps)-skippedSteps)
	}
}

// waitFor polls cond every 200 ms until it holds, failing after 60 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 60 s for %s", what)
		}
	}
}

// todaysNamespaces are the cluster's namespaces now, as the replay takes them.
func todaysNamespaces(t *testing.T, admin kubernetes.Interface) []*corev1.Namespace {
	t.Helper()
	list, err := admin.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []*corev1.Namespace
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out
}

// deployedVersion is the policy and binding name as the API server has them.
func deployedVersion(t *testing.T, admin kubernetes.Interface, name string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	vap := admin.AdmissionregistrationV1()
	pol, err := vap.ValidatingAdmissionPolicies().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bnd, err := vap.ValidatingAdmissionPolicyBindings().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pol, bnd
}
