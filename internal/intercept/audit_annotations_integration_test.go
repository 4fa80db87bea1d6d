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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/celmatch"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestAuditAnnotationsAgreeWithTheAuditLog creates a policy with
// auditAnnotations, makes dry-run creates that it matches, and compares the
// annotations the API server writes into the audit log's event for each
// request with the ones the simulator says it would publish (key
// "<policy>/<key>", value, or none for a null or empty value).
func TestAuditAnnotationsAgreeWithTheAuditLog(t *testing.T) {
	cfg := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, bg := context.Background(), context.Background()
	stamp := fmt.Sprintf("%d", time.Now().UnixNano())
	name, ns := "celaudit-"+stamp, "default"
	labels := map[string]string{"celaudit-run": stamp}
	vap := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	_, err := vap.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			// "block" tells when the API server enforces the policy.
			Validations: []admissionregistrationv1.Validation{{Expression: "!has(object.data) || !('block' in object.data)", Message: "celaudit: blocked"}},
			AuditAnnotations: []admissionregistrationv1.AuditAnnotation{
				{Key: "owner", ValueExpression: "has(object.data) && 'owner' in object.data ? 'owned by ' + string(object.data.owner) : ''"},
				{Key: "keys", ValueExpression: "string(has(object.data) ? size(object.data) : 0) + ' keys'"},
				{Key: "blank", ValueExpression: "'  '"},
			}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = vap.Delete(bg, name, metav1.DeleteOptions{}) })
	bnd := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	if _, err := bnd.Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources:    &admissionregistrationv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: labels}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bnd.Delete(bg, name, metav1.DeleteOptions{}) })

	cache := runningCache(t, testcluster.Admin)
	lookup, err := kube.NewLookup(cfg)
	if err != nil {
		t.Fatal(err)
	}
	asker := Asker{Cache: cache, Lookup: lookup, Timeout: 10 * time.Second, Policies: cache, Params: lookup,
		MayList: func(kube.Kind) bool { return true }}
	cm := func(n string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns, Labels: labels}, Data: data}
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(name+"-warm", map[string]string{"block": "1"}), dry)
		if err != nil && strings.Contains(err.Error(), "celaudit: blocked") && cached(cache, name) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server did not enforce policy %s within 60 s: %v", name, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	published := 0
	for i, data := range []map[string]string{{"owner": "team-blue", "a": "1"}, {"a": "1"}} {
		obj := cm(fmt.Sprintf("%s-%d", name, i), data)
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, obj, dry); err != nil {
			t.Fatal(err)
		}
		ev := testcluster.WaitAuditEvent(t, 20*time.Second, func(e testcluster.AuditEvent) bool {
			return e.Stage == "ResponseComplete" && e.Verb == "create" && e.ObjectRef != nil && e.ObjectRef.Resource == "configmaps" && e.ObjectRef.Name == obj.Name
		})
		fromLog := map[string]string{}
		for k, v := range ev.Annotations {
			if strings.HasPrefix(k, name+"/") {
				fromLog[k] = v
			}
		}
		ans, err := asker.AskWith(ctx, admission.Request{Operation: admissionregistrationv1.Create,
			Resource: admission.GVR{Version: "v1", Resource: "configmaps"}, Namespace: ns, ObjectLabels: labels},
			Objects{Object: toMap(t, obj), User: celmatch.User{Name: "admin"}})
		if err != nil {
			t.Fatal(err)
		}
		mine := onlyPolicy(ans.Policies, name)
		if len(mine) != 1 || mine[0].Outcome == nil {
			t.Fatalf("probe %d: the simulator's answer: %+v", i, mine)
		}
		sim := map[string]string{}
		for _, a := range mine[0].Outcome.AuditAnnotations {
			if a.Result == celmatch.AnnotationPublished {
				sim[a.Key] = a.Value
			}
		}
		if fmt.Sprint(sim) != fmt.Sprint(fromLog) {
			t.Errorf("probe %d: the audit log has %v; the simulator says %v", i, fromLog, sim)
		}
		published += len(fromLog)
		t.Logf("probe %d: audit log %v; simulator %v", i, fromLog, sim)
	}
	if published < 3 {
		t.Errorf("only %d annotations published in the audit log: the probes prove little", published)
	}
}
