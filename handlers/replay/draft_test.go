package replay

import (
	"strings"
	"testing"
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

// TestParseDraftReadsOnePolicyAndOneBinding: either order reads; whatever is
// missing, doubled, of another kind or misspelt is an error naming it, and
// no replay runs on a guess.
func TestParseDraftReadsOnePolicyAndOneBinding(t *testing.T) {
	for _, text := range []string{policyDoc + "---\n" + bindingDoc, bindingDoc + "---\n" + policyDoc} {
		v, err := parseDraft(text)
		if err != nil || v.Policy.Name != "p" || v.Binding.Name != "b" {
			t.Fatalf("%v %+v", err, v)
		}
	}
	for _, c := range []struct{ text, want string }{
		{policyDoc, "needs a ValidatingAdmissionPolicy and a ValidatingAdmissionPolicyBinding"},
		{policyDoc + "---\n" + policyDoc, "two policies"},
		{policyDoc + "---\napiVersion: v1\nkind: ConfigMap\n", "apiVersion \"v1\""},
		{strings.Replace(policyDoc, "validations:", "validationz:", 1) + "---\n" + bindingDoc, "validationz"},
		{policyDoc + "---\n" + bindingDoc + "---\n" + "apiVersion: admissionregistration.k8s.io/v1\nkind: Other\n", "\"Other\""},
	} {
		if _, err := parseDraft(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want it to say %q", err, c.want)
		}
	}
}
