package replay

import (
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	engine "github.com/clusterdesk/clusterdesk/internal/replay"
)

const policyDoc = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}]}
  validations: [{expression: "true"}]
`

const bindingDoc = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: b}
spec: {policyName: p, validationActions: [Deny]}
`

// secondBindingDoc is another binding of p: Warn in dev namespaces.
const secondBindingDoc = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: b2}
spec:
  policyName: p
  validationActions: [Warn]
  matchResources: {namespaceSelector: {matchLabels: {env: dev}}}
`

// TestParseDraftReadsAPolicyAndItsBindings: a policy with one binding or
// more, in any order, reads; whatever is missing, doubled, of another kind,
// of another policy or misspelt is an error naming it, and no replay runs
// on a guess.
func TestParseDraftReadsAPolicyAndItsBindings(t *testing.T) {
	for _, c := range []struct{ text, bindings string }{
		{policyDoc + "---\n" + bindingDoc, "[b]"},
		{bindingDoc + "---\n" + policyDoc, "[b]"},
		{bindingDoc + "---\n" + policyDoc + "---\n" + secondBindingDoc, "[b b2]"},
		{secondBindingDoc + "---\n" + bindingDoc + "---\n" + policyDoc, "[b2 b]"},
	} {
		v, err := parseDraft(c.text)
		var names []string
		for _, b := range v.Bindings {
			names = append(names, b.Name)
		}
		if err != nil || v.Policy.Name != "p" || fmt.Sprint(names) != c.bindings {
			t.Fatalf("%v: policy %v, bindings %v, want %s", err, v.Policy, names, c.bindings)
		}
	}
	otherPolicys := strings.Replace(strings.Replace(secondBindingDoc, "policyName: p", "policyName: q", 1), "b2", "bq", 1)
	for _, c := range []struct{ text, want string }{
		{policyDoc, "needs a ValidatingAdmissionPolicy and at least one ValidatingAdmissionPolicyBinding"},
		{bindingDoc + "---\n" + secondBindingDoc, "needs a ValidatingAdmissionPolicy"},
		{policyDoc + "---\n" + policyDoc, "two policies"},
		{policyDoc + "---\n" + bindingDoc + "---\n" + bindingDoc, `document 3: the draft has two bindings named "b"`},
		{policyDoc + "---\n" + bindingDoc + "---\n" + otherPolicys, `the binding "bq" binds the policy "q", not the draft's policy "p"`},
		{policyDoc + "---\napiVersion: v1\nkind: ConfigMap\n", "apiVersion \"v1\""},
		{strings.Replace(policyDoc, "validations:", "validationz:", 1) + "---\n" + bindingDoc, "validationz"},
		{policyDoc + "---\n" + bindingDoc + "---\n" + strings.Replace(secondBindingDoc, "matchResources", "matchResourcez", 1), "document 3 (ValidatingAdmissionPolicyBinding)"},
		{policyDoc + "---\n" + bindingDoc + "---\n" + "apiVersion: admissionregistration.k8s.io/v1\nkind: Other\n", "\"Other\""},
	} {
		if _, err := parseDraft(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want it to say %q", err, c.want)
		}
	}
}

// policyCluster is the shared cache of policies and bindings by kind and name.
type policyCluster struct {
	ports.Cluster
	objects map[kube.KindID][]runtime.Object
}

func (c policyCluster) List(id kube.KindID) ([]runtime.Object, error) { return c.objects[id], nil }
func (c policyCluster) Get(id kube.KindID, name string) (runtime.Object, error) {
	for _, o := range c.objects[id] {
		if o.(metav1.Object).GetName() == name {
			return o, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: string(id)}, name)
}

// boundTwice is a cluster where p is bound by b and b2 and q by bq.
func boundTwice(t *testing.T) policyCluster {
	t.Helper()
	c := policyCluster{objects: map[kube.KindID][]runtime.Object{}}
	v, err := parseDocs(policyDoc + "---\n" + secondBindingDoc + "---\n" + bindingDoc)
	if err != nil {
		t.Fatal(err)
	}
	bq := v.Bindings[0].DeepCopy()
	bq.Name, bq.Spec.PolicyName = "bq", "q"
	c.objects[kube.AdmissionPolicies] = []runtime.Object{v.Policy}
	c.objects[kube.AdmissionPolicyBindings] = []runtime.Object{v.Bindings[0], bq, v.Bindings[1]}
	return c
}

// TestDeployedIsThePolicyWithEveryBinding: the page's starting text and the
// version the draft is compared with hold the policy and every binding
// that binds it (the one asked for first), none of another policy's; the
// text parses back as a draft.
func TestDeployedIsThePolicyWithEveryBinding(t *testing.T) {
	c := boundTwice(t)
	pol := c.objects[kube.AdmissionPolicies][0].(*admissionregistrationv1.ValidatingAdmissionPolicy)
	for first, want := range map[string]string{"": "[b b2]", "b2": "[b2 b]"} {
		text, err := deployedText(c, pol, first)
		if err != nil {
			t.Fatal(err)
		}
		v, err := parseDraft(text)
		var names []string
		for _, b := range v.Bindings {
			names = append(names, b.Name)
		}
		if err != nil || fmt.Sprint(names) != want {
			t.Errorf("?binding=%s: text\n%s\nbindings %v, %v; want %s", first, text, names, err, want)
		}
	}
	dep, words := deployed(c, engine.Version{Policy: pol})
	if dep == nil || len(dep.Bindings) != 2 || words != `Compared with the deployed policy "p" and its bindings "b", "b2".` {
		t.Errorf("deployed %+v, %q", dep, words)
	}
}

// TestEditorDraftReplaysEveryBinding: a policy of the editor is replayed
// with every deployed binding of it; a binding with the policy as deployed
// and the policy's other bindings, the edited one in place of its deployed
// version; the basis says so.
func TestEditorDraftReplaysEveryBinding(t *testing.T) {
	c := boundTwice(t)
	draft, basis, err := editorDraft(c, kube.AdmissionPolicies, strings.Replace(policyDoc, `"true"`, `"false"`, 1))
	v, perr := parseDraft(draft)
	if err != nil || perr != nil || len(v.Bindings) != 2 || v.Policy.Spec.Validations[0].Expression != "false" ||
		basis != `Replayed with its bindings "b", "b2" as the cluster runs them today, each as the API server evaluates it.` {
		t.Fatalf("policy: %v %v, basis %q, draft\n%s", err, perr, basis, draft)
	}
	edited := strings.Replace(bindingDoc, "[Deny]", "[Audit]", 1)
	draft, basis, err = editorDraft(c, kube.AdmissionPolicyBindings, edited)
	v, perr = parseDraft(draft)
	if err != nil || perr != nil || len(v.Bindings) != 2 || v.Bindings[0].Name != "b" || v.Bindings[0].Spec.ValidationActions[0] != "Audit" ||
		v.Bindings[1].Name != "b2" || !strings.Contains(basis, `its other binding "b2" as deployed, unchanged`) {
		t.Fatalf("binding: %v %v, basis %q, draft\n%s", err, perr, basis, draft)
	}
	// A new binding of p: the deployed ones are all replayed beside it.
	draft, basis, err = editorDraft(c, kube.AdmissionPolicyBindings, strings.Replace(bindingDoc, "name: b}", "name: b3}", 1))
	if v, perr = parseDraft(draft); err != nil || perr != nil || len(v.Bindings) != 3 || !strings.Contains(basis, `other bindings "b", "b2"`) {
		t.Fatalf("a new binding: %v %v, basis %q", err, perr, basis)
	}
}
