//go:build integration

package replay

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// The proof's Pods and custom resources (issue 45): Pods stay Pending (the
// devcluster has no scheduler or kubelet) and are deleted at once (a pod
// on no node has no grace period), but admission judges each write; the
// custom resource is the test's own CRD, a group per run.

// installWidgets creates a namespaced CRD, Widget (spec.size an integer,
// spec.colour a string), in a group of its own, waits until the API server
// serves it, and deletes it when the test ends (the API server then
// deletes its instances).
func installWidgets(t *testing.T, suffix string) schema.GroupVersionResource {
	t.Helper()
	group := "rp" + suffix + ".clusterdesk.test"
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget", ListKind: "WidgetList", Plural: "widgets", Singular: "widget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"size": {Type: "integer"}, "colour": {Type: "string"},
						}},
					}}}}}}}
	ext := clientset.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}) })
	// Established is not enough: the API server answers for the new
	// resource once its own CRD informer has it (see
	// handlers/editor_cr_integration_test.go's installCRD): wait for a list.
	dyn := dynamicFor(t, testcluster.RestConfig(t, testcluster.Admin))
	waitFor(t, crd.Name+" to be served", func() bool {
		_, err := dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{Limit: 1})
		return err == nil
	})
	return gvr
}

// workloadTraffic is the proof's Pods and Widgets, after the namespaces
// exist: creates judged on pod spec fields, label and image patches (an
// UPDATE judged with its oldObject), deletes of protected objects (judged on
// the oldObject the ledger keeps), a dry run, a service account, a write
// RBAC refuses and one the CRD's schema refuses.
func workloadTraffic(suffix string, widgets schema.GroupVersionResource, users proofUsers) []proofStep {
	alice, bob, deployer, saGroups := users.alice, users.bob, users.deployer, users.saGroups
	labels := func(extra ...string) map[string]string { return proofLabels(suffix, extra...) }
	limited := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}
	pod := func(ns, name, image string, l map[string]string, mod func(*corev1.PodSpec)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: l},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image, Resources: limited}}}}
		if mod != nil {
			mod(&p.Spec)
		}
		return p
	}
	createPod := func(p func(ns string) *corev1.Pod, dryRun bool) func(context.Context, proofClient, string) error {
		return func(ctx context.Context, c proofClient, ns string) error {
			o := metav1.CreateOptions{}
			if dryRun {
				o.DryRun = []string{metav1.DryRunAll}
			}
			_, err := c.CoreV1().Pods(ns).Create(ctx, p(ns), o)
			return err
		}
	}
	patchPod := func(name, body string) func(context.Context, proofClient, string) error {
		return func(ctx context.Context, c proofClient, ns string) error {
			_, err := c.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{})
			return err
		}
	}
	deletePod := func(name string) func(context.Context, proofClient, string) error {
		return func(ctx context.Context, c proofClient, ns string) error {
			return c.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
		}
	}
	widget := func(name string, l map[string]string, spec map[string]any) func(context.Context, proofClient, string) error {
		return func(ctx context.Context, c proofClient, ns string) error {
			lbl := map[string]any{}
			for k, v := range l {
				lbl[k] = v
			}
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": widgets.GroupVersion().String(), "kind": "Widget",
				"metadata": map[string]any{"name": name, "namespace": ns, "labels": lbl}, "spec": spec}}
			_, err := c.dyn.Resource(widgets).Namespace(ns).Create(ctx, u, metav1.CreateOptions{})
			return err
		}
	}
	patchWidget := func(name, body string) func(context.Context, proofClient, string) error {
		return func(ctx context.Context, c proofClient, ns string) error {
			_, err := c.dyn.Resource(widgets).Namespace(ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
			return err
		}
	}
	deleteWidget := func(name string) func(context.Context, proofClient, string) error {
		return func(ctx context.Context, c proofClient, ns string) error {
			return c.dyn.Resource(widgets).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
		}
	}
	const good, docker = "registry.example/web:1", "docker.io/library/nginx:1"
	return []proofStep{
		// The ServiceAccount admission plugin refuses a pod whose service
		// account does not exist, and the devcluster runs no controller
		// that makes a namespace's "default".
		{what: "the deployer creates the namespace's default service account", user: deployer, groups: saGroups,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}, metav1.CreateOptions{})
				return err
			}},
		{what: "alice creates pod app from registry.example with a memory limit, owner alice", user: alice,
			do: createPod(func(ns string) *corev1.Pod { return pod(ns, "app", good, labels("owner", "alice"), nil) }, false)},
		{what: "bob creates a pod from docker.io", user: bob, denied: true,
			do: createPod(func(ns string) *corev1.Pod { return pod(ns, "hub", docker, labels(), nil) }, false)},
		{what: "the deployer creates a pod on the host's network", user: deployer, groups: saGroups, denied: true,
			do: createPod(func(ns string) *corev1.Pod {
				return pod(ns, "hostnet", good, labels(), func(s *corev1.PodSpec) { s.HostNetwork = true })
			}, false)},
		{what: "bob creates a pod without a memory limit", user: bob, denied: true,
			do: createPod(func(ns string) *corev1.Pod {
				return pod(ns, "unlimited", good, labels(), func(s *corev1.PodSpec) { s.Containers[0].Resources = corev1.ResourceRequirements{} })
			}, false)},
		{what: "the deployer tries a pod on the host's network in a dry run", user: deployer, groups: saGroups, denied: true,
			do: createPod(func(ns string) *corev1.Pod {
				return pod(ns, "trialnet", good, labels(), func(s *corev1.PodSpec) { s.HostNetwork = true })
			}, true)},
		{what: "bob makes himself app's owner", user: bob, denied: true,
			do: patchPod("app", `{"metadata":{"labels":{"owner":"bob"}}}`)},
		{what: "alice labels app tier=web", user: alice,
			do: patchPod("app", `{"metadata":{"labels":{"tier":"web"}}}`)},
		{what: "bob changes app's image to docker.io", user: bob, denied: true,
			do: patchPod("app", `{"spec":{"containers":[{"name":"app","image":"`+docker+`"}]}}`)},
		{what: "alice creates pod keep, protected", user: alice,
			do: createPod(func(ns string) *corev1.Pod { return pod(ns, "keep", good, labels("protected", "yes"), nil) }, false)},
		{what: "bob deletes keep", user: bob, denied: true, do: deletePod("keep")},
		{what: "alice deletes app", user: alice, do: deletePod("app")},
		{what: "the deployer creates admin-pod", user: deployer, groups: saGroups, denied: true,
			do: createPod(func(ns string) *corev1.Pod { return pod(ns, "admin-pod", good, labels(), nil) }, false)},

		{what: "alice creates widget w1 of 3, red, protected", user: alice,
			do: widget("w1", labels("protected", "yes"), map[string]any{"size": int64(3), "colour": "red"})},
		{what: "bob creates widget big of 12", user: bob, denied: true,
			do: widget("big", labels(), map[string]any{"size": int64(12), "colour": "red"})},
		{what: "bob paints w1 blue", user: bob, denied: true, do: patchWidget("w1", `{"spec":{"colour":"blue"}}`)},
		{what: "alice grows w1 to 10", user: alice, do: patchWidget("w1", `{"spec":{"size":10}}`)},
		{what: "bob deletes w1", user: bob, denied: true, do: deleteWidget("w1")},
		{what: "alice creates widget w2 of 1", user: alice,
			do: widget("w2", labels(), map[string]any{"size": int64(1), "colour": "green"})},
		{what: "alice deletes w2", user: alice, do: deleteWidget("w2")},
		{what: "the deployer creates admin-widget", user: deployer, groups: saGroups, denied: true,
			do: widget("admin-widget", labels(), map[string]any{"size": int64(1), "colour": "green"})},
		// Refused before any policy: by RBAC (mallory has no binding), and
		// by the CRD's schema (the API server validates the object before
		// validating admission: k8s.io/apiserver's registry/generic
		// Store.Create runs the strategy's Validate, then the admission
		// validation function). The replay skips both: the first by its
		// authorization decision, the second by its recorded refusal (a
		// 422 naming no policy); the draft would have denied the widget of
		// 50, had it been valid.
		{what: "mallory, bound to nothing, creates a widget", user: "dev-mallory", plain: true,
			refused: "forbidden: User \"dev-mallory\" cannot create resource \"widgets\"", replay: SkipNotAdmitted,
			do: widget("m1", labels(), map[string]any{"size": int64(1), "colour": "green"})},
		{what: "bob creates a widget of 50 whose colour is a number", user: bob,
			refused: "spec.colour: Invalid value", replay: SkipInvalid,
			do: widget("typo", labels(), map[string]any{"size": int64(50), "colour": int64(7)})},
	}
}

// proofUsers are the traffic's people and service account.
type proofUsers struct {
	alice, bob, deployer string
	saGroups             []string
}

var theProofUsers = proofUsers{alice: "dev-alice", bob: "dev-bob", deployer: "system:serviceaccount:ci:deployer",
	saGroups: []string{"system:serviceaccounts", "system:serviceaccounts:ci"}}

// workloadValidations are the draft's validations of Pods and Widgets:
// what admins write for pods (the registry, no host network, a memory
// limit, an immutable owner label) and for a custom resource's spec
// (integer arithmetic on it, a field fixed at creation).
func workloadValidations() []admissionregistrationv1.Validation {
	return []admissionregistrationv1.Validation{
		{Expression: "request.operation == 'DELETE' || object.kind != 'Pod' || object.spec.containers.all(c, c.image.startsWith('registry.example/'))",
			Message: "images come from registry.example"},
		{Expression: "request.operation == 'DELETE' || object.kind != 'Pod' || !has(object.spec.hostNetwork) || !object.spec.hostNetwork",
			Message: "no host network"},
		{Expression: "request.operation == 'DELETE' || object.kind != 'Pod' || object.spec.containers.all(c, has(c.resources.limits) && 'memory' in c.resources.limits)",
			Message: "every container sets a memory limit"},
		{Expression: "request.operation != 'UPDATE' || object.kind != 'Pod' || !has(oldObject.metadata.labels) || !('owner' in oldObject.metadata.labels) || " +
			"(has(object.metadata.labels) && 'owner' in object.metadata.labels && object.metadata.labels.owner == oldObject.metadata.labels.owner)",
			Message: "a pod's owner is immutable"},
		// size + 1: int arithmetic, as the API server has the CR's integers.
		{Expression: "request.operation == 'DELETE' || object.kind != 'Widget' || object.spec.size + 1 <= 11",
			MessageExpression: "'at most 10 per widget, not ' + string(object.spec.size)"},
		{Expression: "request.operation != 'UPDATE' || object.kind != 'Widget' || object.spec.colour == oldObject.spec.colour",
			Message: "a widget's colour is fixed"},
	}
}

// exemptTraffic is a namespace the binding's namespaceSelector leaves out
// (labelled exempt today, as at the writes): what is written there is
// matched by nothing.
func exemptTraffic(suffix string, users proofUsers) []proofStep {
	return []proofStep{
		{what: "the deployer creates namespace -x, exempt", user: users.deployer, groups: users.saGroups,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-x",
					Labels: map[string]string{"replayproof": suffix, "exempt": "yes"}}}, metav1.CreateOptions{})
				return err
			}},
		{what: "bob creates a ConfigMap, mode forbidden, in the exempt namespace", user: users.bob,
			do: func(ctx context.Context, c proofClient, ns string) error {
				_, err := c.CoreV1().ConfigMaps(ns+"-x").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "exempted", Namespace: ns + "-x",
					Labels: map[string]string{"replayproof": suffix}}, Data: map[string]string{"mode": "forbidden"}}, metav1.CreateOptions{})
				return err
			}},
	}
}

// cleanWorkload deletes what the steps left in ns (the namespace itself is
// the caller's): pods, service accounts, widgets.
func cleanWorkload(c proofClient, ns string, widgets schema.GroupVersionResource) {
	ctx := context.Background()
	_ = c.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	_ = c.CoreV1().ServiceAccounts(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	_ = c.dyn.Resource(widgets).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}
