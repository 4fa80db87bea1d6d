//go:build integration

package intercept

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/celmatch"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestCRDParamsAgreeWithTheAPIServer creates a CRD of its own (a namespaced
// kind Limit in a group unique to the run) as a policy's paramKind, and
// compares the simulator's answer with the API server's dry-run for bindings
// that take the param by name (in the request's namespace), by label
// selector (two params: the policy is evaluated with each), and by a name
// that does not exist with parameterNotFoundAction Deny. The params are read
// as the signed-in user through discovery and the dynamic client.
func TestCRDParamsAgreeWithTheAPIServer(t *testing.T) {
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ext := apiextensionsclient.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	ctx, bg := context.Background(), context.Background()
	stamp := fmt.Sprintf("%d", time.Now().UnixNano())
	group := "p" + stamp + ".celparam.clusterdesk.dev"
	crdName := "limits." + group
	_, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: crdName},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "limits", Singular: "limit", Kind: "Limit", ListKind: "LimitList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{"max": {Type: "integer"}}}}}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(bg, crdName, metav1.DeleteOptions{})
	})
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "limits"}
	ns := "default"
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range []struct {
		name   string
		max    int64
		labels map[string]string
	}{{"by-name", 2, nil}, {"sel-a", 5, map[string]string{"celparam-run": stamp}}, {"sel-b", 1, map[string]string{"celparam-run": stamp}}} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Limit",
			"metadata": map[string]any{"name": p.name, "namespace": ns}, "spec": map[string]any{"max": p.max}}}
		obj.SetLabels(p.labels)
		for {
			_, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("param %s: %v", p.name, err)
			}
			time.Sleep(200 * time.Millisecond) // the CRD is not established yet
		}
	}

	cache := runningCache(t, testcluster.Admin)
	lookup, err := kube.NewLookup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	asker := Asker{Cache: cache, Lookup: lookup, Timeout: 10 * time.Second, Policies: cache, Params: lookup,
		MayList: func(kube.Kind) bool { return true }}

	deny := ptr.To(admissionregistrationv1.DenyAction)
	cases := []struct {
		name string
		ref  admissionregistrationv1.ParamRef
		// keys per probe: the number of data keys of the ConfigMap sent
		probes []int
	}{
		{name: "byname", ref: admissionregistrationv1.ParamRef{Name: "by-name", ParameterNotFoundAction: deny}, probes: []int{3, 1}},
		{name: "selector", ref: admissionregistrationv1.ParamRef{Namespace: ns, ParameterNotFoundAction: deny,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"celparam-run": stamp}}}, probes: []int{2, 1}},
		{name: "missing", ref: admissionregistrationv1.ParamRef{Name: "no-such-limit", ParameterNotFoundAction: deny}, probes: []int{1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "celparam-" + c.name + "-" + stamp
			labels := map[string]string{"celparam-run": stamp, "celparam-case": c.name}
			vap := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies()
			_, err := vap.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{FailurePolicy: ptr.To(admissionregistrationv1.Fail),
					ParamKind: &admissionregistrationv1.ParamKind{APIVersion: group + "/v1", Kind: "Limit"},
					MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
						RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
							Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
					Validations: []admissionregistrationv1.Validation{{Expression: "!has(object.data) || size(object.data) <= params.spec.max",
						MessageExpression: "'celparam: at most ' + string(params.spec.max) + ' keys (' + params.metadata.name + ')'"}}}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = vap.Delete(bg, name, metav1.DeleteOptions{}) })
			bnd := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
			ref := c.ref
			if _, err := bnd.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ParamRef: &ref,
					ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
					MatchResources:    &admissionregistrationv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: labels}}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = bnd.Delete(bg, name, metav1.DeleteOptions{}) })
			cm := func(i, keys int) *corev1.ConfigMap {
				data := map[string]string{}
				for k := 0; k < keys; k++ {
					data[fmt.Sprintf("k%d", k)] = "v"
				}
				return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Namespace: ns, Labels: labels}, Data: data}
			}
			send := func(i int) error {
				_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(i, c.probes[i]), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			}
			// Until the API server enforces the policy (and its param
			// informer for the new kind has synced), the first probe is
			// allowed or fails "not yet synced"; the missing case's denial
			// is a configuration error, so it waits for that text.
			deadline := time.Now().Add(60 * time.Second)
			for {
				err := send(0)
				ready := err != nil && strings.Contains(err.Error(), "celparam:")
				if c.name == "missing" {
					ready = err != nil && strings.Contains(err.Error(), "no params found")
				}
				if ready && cached(cache, name) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the API server did not enforce policy %s within 60 s (last answer: %v)", name, err)
				}
				time.Sleep(250 * time.Millisecond)
			}
			sawDeny, sawAllow := false, false
			for i := range c.probes {
				apiErr := send(i)
				ans, err := asker.AskWith(ctx, admission.Request{Operation: admissionregistrationv1.Create,
					Resource: admission.GVR{Version: "v1", Resource: "configmaps"}, Namespace: ns, ObjectLabels: labels},
					Objects{Object: toMap(t, cm(i, c.probes[i])), User: celmatch.User{Name: "admin"}})
				if err != nil {
					t.Fatal(err)
				}
				mine := onlyPolicy(ans.Policies, name)
				if len(mine) != 1 || !mine[0].Applies || mine[0].Unresolved {
					t.Fatalf("probe %d: the simulator's answer: %+v", i, mine)
				}
				simMsg := DeniedMessage(mine)
				switch {
				case (apiErr != nil) != (simMsg != ""):
					t.Errorf("probe %d: API server says %v; simulator says denied=%q (params %q)", i, apiErr, simMsg, mine[0].Params)
				case apiErr != nil && !strings.Contains(apiErr.Error(), simMsg):
					t.Errorf("probe %d: API server's message %q does not contain the simulator's %q", i, apiErr.Error(), simMsg)
				}
				if apiErr != nil {
					sawDeny = true
				} else {
					sawAllow = true
				}
				t.Logf("probe %d (%d keys): API server: %v; simulator: %q; %s", i, c.probes[i], apiErr, simMsg, mine[0].Params)
			}
			if !sawDeny || (c.name != "missing" && !sawAllow) {
				t.Errorf("the probes must see the API server deny and allow: deny=%v allow=%v", sawDeny, sawAllow)
			}
		})
	}
}
