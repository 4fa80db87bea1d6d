package replay

import (
	"errors"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// editorDraft is the policy replay's draft made of a YAML editor's text of
// kind, which is one object, replayed as the API server would evaluate it
// once applied: a policy with every binding of it as the cluster runs them
// today (or, when it has none, one that denies wherever the policy
// matches); a binding with the policy it names as the cluster runs it
// today and that policy's other deployed bindings as they are (the edited
// one takes the place of its deployed version). basis says which, for the
// page. A text that is not one object of kind, or a binding of a policy
// the cluster does not have, is the error: nothing is replayed.
func editorDraft(c ports.Cluster, kind kube.KindID, text string) (draft, basis string, err error) {
	v, err := parseDocs(text)
	if err != nil {
		return "", "", err
	}
	text = strings.TrimRight(text, "\n") + "\n"
	switch {
	case kind == kube.AdmissionPolicies && v.Policy != nil && len(v.Bindings) == 0:
		name := v.Policy.Name
		if name == "" {
			return "", "", errors.New("the ValidatingAdmissionPolicy has no metadata.name")
		}
		bt, mine, err := bindingsText(c, name, "", "")
		if err != nil {
			return "", "", err
		}
		return text + bt, policyBasis(name, mine), nil
	case kind == kube.AdmissionPolicyBindings && len(v.Bindings) == 1 && v.Policy == nil:
		b := v.Bindings[0]
		if b.Name == "" {
			return "", "", errors.New("the ValidatingAdmissionPolicyBinding has no metadata.name")
		}
		if b.Spec.PolicyName == "" {
			return "", "", errors.New("the binding names no policy (spec.policyName): there is nothing to replay it with")
		}
		o, err := c.Get(kube.AdmissionPolicies, b.Spec.PolicyName)
		pol, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		if err != nil || !ok {
			return "", "", fmt.Errorf("the binding binds the policy %q, which the cluster does not have: there is nothing to replay it with. Create the policy first, or bind one the cluster has", b.Spec.PolicyName)
		}
		pt, err := policyText(pol)
		if err != nil {
			return "", "", err
		}
		others, mine, err := bindingsText(c, pol.Name, "", b.Name)
		if err != nil {
			return "", "", err
		}
		return pt + "---\n" + text + others, bindingBasis(pol.Name, b.Name, mine), nil
	}
	want := "ValidatingAdmissionPolicy"
	if kind == kube.AdmissionPolicyBindings {
		want = "ValidatingAdmissionPolicyBinding"
	}
	return "", "", fmt.Errorf("the text is not one %s of %s: this editor replays the %s it edits", want, apiVersion, want)
}

// policyBasis says which bindings a policy of the editor is replayed
// with: its deployed bindings (mine), or none.
func policyBasis(policy string, mine []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) string {
	if len(mine) == 0 {
		return fmt.Sprintf("The cluster has no binding of %q: replayed with a binding that denies wherever the policy matches.", policy)
	}
	return fmt.Sprintf("Replayed with its %s %s as the cluster runs %s today, each as the API server evaluates it.",
		plural(len(mine), "binding", "bindings"), quoted(mine), plural(len(mine), "it", "them"))
}

// bindingBasis says what a binding of the editor is replayed with: the
// policy as deployed and its other deployed bindings (others).
func bindingBasis(policy, binding string, others []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) string {
	s := fmt.Sprintf("Replayed with the policy %q as the cluster runs it today", policy)
	if len(others) == 0 {
		return s + `; it has no other binding.`
	}
	return s + fmt.Sprintf(", and its other %s %s as deployed, unchanged: the replay is the policy with all its bindings, %q as edited.",
		plural(len(others), "binding", "bindings"), quoted(others), binding)
}
