//go:build integration

package intercept

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// warnings collects the API server's Warning headers.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// vapCase is one policy with its binding and the ConfigMaps sent to the API
// server (dry-run) and to the simulator.
type vapCase struct {
	name    string
	policy  admissionregistrationv1.ValidatingAdmissionPolicySpec
	actions []admissionregistrationv1.ValidationAction
	param   *admissionregistrationv1.ParamRef
	// probes: data (and annotations) of the object; old is the stored
	// object's data for an UPDATE (nil: CREATE).
	probes []vapProbe
}

type vapProbe struct {
	data        map[string]string
	annotations map[string]string
	old         map[string]string
}

// TestPoliciesAgreeWithTheAPIServer creates ValidatingAdmissionPolicies and
// bindings scoped to this run's label, and compares the simulator's answer
// with the API server's dry-run of the same ConfigMap create or update:
// denied (with the API server's message) or allowed, and warnings for the
// Warn action. Every case must see the API server both deny (or warn) and
// allow, so that agreement is not agreement on nothing.
func TestPoliciesAgreeWithTheAPIServer(t *testing.T) {
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	warn := &warnings{}
	wcfg := rest.CopyConfig(cfg)
	wcfg.WarningHandler = warn
	cs := kubernetes.NewForConfigOrDie(wcfg)
	ctx := context.Background()
	stamp := fmt.Sprintf("%d", time.Now().UnixNano())
	ns := "default"
	// The param is the ConfigMap the API server itself keeps from its start
	// (kube-system/extension-apiserver-authentication), not one this test
	// creates: the API server's ConfigMap param
	// informer is the shared factory's, started with the first policy that
	// takes ConfigMap params and stopped, for good, when the last such policy
	// is deleted (ensureParamsForPolicyLocked in
	// k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_source.go;
	// kubernetes/kubernetes#133827). After one run of this test, a ConfigMap
	// created later is "not found" by the API server until it restarts; one
	// that existed before keeps being found.
	paramNS, paramName := "kube-system", "extension-apiserver-authentication"
	param, err := cs.CoreV1().ConfigMaps(paramNS).Get(ctx, paramName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca := param.Data["client-ca-file"]
	if ca == "" {
		t.Fatalf("ConfigMap %s/%s has no client-ca-file", paramNS, paramName)
	}

	deny := []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}
	cases := []vapCase{
		{name: "field", actions: deny, policy: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "has(object.data) && 'owner' in object.data", Message: "vapsim: data.owner is required"}}},
			probes: []vapProbe{{data: map[string]string{"x": "1"}}, {data: map[string]string{"owner": "me"}}}},
		{name: "msgexpr", actions: deny, policy: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "!has(object.data) || !('color' in object.data) || object.data.color != 'red'",
				MessageExpression: "'vapsim: color ' + object.data.color + ' is not allowed in ' + object.metadata.name",
				Reason:            ptr.To(metav1.StatusReasonForbidden)}}},
			probes: []vapProbe{{data: map[string]string{"color": "red"}}, {data: map[string]string{"color": "blue"}}}},
		{name: "variables", actions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn}, policy: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Variables: []admissionregistrationv1.Variable{{Name: "keys", Expression: "has(object.data) ? object.data.size() : 0"}},
			Validations: []admissionregistrationv1.Validation{{Expression: "variables.keys <= 2",
				MessageExpression: "'vapsim: ' + string(variables.keys) + ' keys, at most 2'"}}},
			probes: []vapProbe{{data: map[string]string{"a": "1", "b": "2", "c": "3"}}, {data: map[string]string{"a": "1"}}}},
		{name: "matchcond", actions: deny, policy: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "not-skipped",
				Expression: "!has(object.metadata.annotations) || !('vapsim/skip' in object.metadata.annotations)"}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "vapsim: denied unless skipped"}}},
			probes: []vapProbe{{data: map[string]string{"a": "1"}}, {data: map[string]string{"a": "1"}, annotations: map[string]string{"vapsim/skip": "yes"}}}},
		{name: "oldobject", actions: deny, policy: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "request.operation != 'UPDATE' || oldObject.data.mode == object.data.mode",
				MessageExpression: "'vapsim: mode is immutable, was ' + oldObject.data.mode"}}},
			probes: []vapProbe{{data: map[string]string{"mode": "b"}, old: map[string]string{"mode": "a"}}, {data: map[string]string{"mode": "a", "x": "y"}, old: map[string]string{"mode": "a"}}}},
		{name: "param", actions: deny, param: &admissionregistrationv1.ParamRef{Name: paramName, Namespace: paramNS,
			ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)},
			policy: admissionregistrationv1.ValidatingAdmissionPolicySpec{ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
				Validations: []admissionregistrationv1.Validation{{Expression: "has(object.data) && 'ca' in object.data && object.data.ca == params.data['client-ca-file']",
					MessageExpression: "'vapsim: data.ca must be the client-ca-file of ConfigMap ' + params.metadata.name"}}},
			probes: []vapProbe{{data: map[string]string{"ca": "not the CA"}}, {data: map[string]string{"ca": ca}}}},
	}

	cache := runningCache(t, testcluster.Admin)
	lookup, err := kube.NewLookup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	asker := Asker{Cache: cache, Lookup: lookup, Timeout: 10 * time.Second, Policies: cache, Params: lookup,
		MayList: func(kube.Kind) bool { return true }}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "vapsim-" + c.name + "-" + stamp
			labels := map[string]string{"vapsim-run": stamp, "vapsim-case": c.name}
			spec := c.policy
			spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
			spec.MatchConstraints = &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}}
			vap := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies()
			if _, err := vap.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = vap.Delete(context.Background(), name, metav1.DeleteOptions{}) })
			bnd := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
			if _, err := bnd.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ValidationActions: c.actions, ParamRef: c.param,
					MatchResources: &admissionregistrationv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: labels}}}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = bnd.Delete(context.Background(), name, metav1.DeleteOptions{}) })

			// The stored objects the UPDATE probes change carry no case
			// label, so creating them is untouched by the policy.
			olds := make([]*corev1.ConfigMap, len(c.probes))
			for i, p := range c.probes {
				if p.old == nil {
					continue
				}
				stored, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
					Name: fmt.Sprintf("%s-old-%d", name, i), Labels: map[string]string{"vapsim-run": stamp}}, Data: p.old}, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				olds[i] = stored
				t.Cleanup(func() {
					_ = cs.CoreV1().ConfigMaps(ns).Delete(context.Background(), stored.Name, metav1.DeleteOptions{})
				})
			}
			send := func(i int) (error, []string) {
				p := c.probes[i]
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Namespace: ns, Labels: labels, Annotations: p.annotations}, Data: p.data}
				warn.take()
				var err error
				if olds[i] != nil {
					cm.Name, cm.ResourceVersion, cm.UID = olds[i].Name, olds[i].ResourceVersion, olds[i].UID
					_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
				} else {
					_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				}
				return err, vapsimWarnings(warn.take())
			}
			// A new policy takes a moment before the API server enforces
			// it: probe with the first (rejected or warned) object until it
			// is, within a bound; the cache must have seen both objects too.
			// The API server's param informer starts with the policy, so
			// until it has synced a binding fails "no params found" although
			// the param exists: every case here is configured correctly, so
			// that answer means "not ready yet".
			deadline := time.Now().Add(60 * time.Second)
			for {
				err, w := send(0)
				configuring := err != nil && strings.Contains(err.Error(), "failed to configure binding")
				if (err != nil || len(w) > 0) && !configuring && cached(cache, name) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the API server did not enforce policy %s within 60 s (last answer: %v, warnings %v)", name, err, w)
				}
				time.Sleep(250 * time.Millisecond)
			}
			sawDeny, sawAllow := false, false
			for i, p := range c.probes {
				apiErr, apiWarn := send(i)
				req := admission.Request{Operation: admissionregistrationv1.Create, Resource: admission.GVR{Version: "v1", Resource: "configmaps"},
					Namespace: ns, ObjectLabels: labels}
				obj := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Namespace: ns, Labels: labels, Annotations: p.annotations}, Data: p.data}
				var objs Objects
				objs.Object = toMap(t, obj)
				if olds[i] != nil {
					req.Operation, req.OldObjectLabels = admissionregistrationv1.Update, olds[i].Labels
					obj.Name = olds[i].Name
					objs.Object = toMap(t, obj)
					old := olds[i].DeepCopy()
					old.APIVersion, old.Kind = "v1", "ConfigMap"
					objs.OldObject = toMap(t, old)
				}
				objs.User.Name = "admin"
				ans, err := asker.AskWith(ctx, req, objs)
				if err != nil {
					t.Fatal(err)
				}
				mine := onlyPolicy(ans.Policies, name)
				if len(mine) != 1 || !mine[0].Applies {
					t.Fatalf("probe %d: the simulator does not apply binding %s: %+v", i, name, mine)
				}
				simMsg := DeniedMessage(mine)
				simWarn := Warnings(mine)
				var status apierrors.APIStatus
				switch {
				case apiErr != nil && !errors.As(apiErr, &status):
					t.Fatalf("probe %d: %v", i, apiErr)
				case (apiErr != nil) != (simMsg != ""):
					t.Errorf("probe %d: API server says %v; simulator says denied=%q (outcome %+v)", i, apiErr, simMsg, mine[0].Outcome)
				case apiErr != nil && !strings.Contains(apiErr.Error(), simMsg):
					t.Errorf("probe %d: API server's message %q does not contain the simulator's %q", i, apiErr.Error(), simMsg)
				}
				if strings.Join(apiWarn, "|") != strings.Join(simWarn, "|") {
					t.Errorf("probe %d: API server warned %q; simulator %q", i, apiWarn, simWarn)
				}
				if apiErr != nil || len(apiWarn) > 0 {
					sawDeny = true
				} else {
					sawAllow = true
				}
				t.Logf("probe %d: API server: err=%v warnings=%q; simulator: %q %q", i, apiErr, apiWarn, simMsg, simWarn)
			}
			if !sawDeny || !sawAllow {
				t.Errorf("case %s: the API server must both reject (or warn) and allow among the probes: deny=%v allow=%v", c.name, sawDeny, sawAllow)
			}
		})
	}
}

func vapsimWarnings(all []string) []string {
	var out []string
	for _, w := range all {
		if strings.Contains(w, "vapsim") {
			out = append(out, w)
		}
	}
	return out
}

func onlyPolicy(all []PolicyAnswer, name string) []PolicyAnswer {
	var out []PolicyAnswer
	for _, a := range all {
		if a.Policy == name {
			out = append(out, a)
		}
	}
	return out
}

// cached reports whether the cache holds both the policy and its binding.
func cached(c *kube.Cache, name string) bool {
	found := 0
	for _, id := range []kube.KindID{kube.AdmissionPolicies, kube.AdmissionPolicyBindings} {
		objs, err := c.List(id)
		if err != nil {
			return false
		}
		for _, o := range objs {
			if m, ok := o.(metav1.Object); ok && m.GetName() == name {
				found++
			}
		}
	}
	return found == 2
}

func toMap(t *testing.T, obj runtime.Object) map[string]any {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
