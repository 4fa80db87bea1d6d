package replay

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// editorDraft is the policy replay's draft made of a YAML editor's text of
// kind, which is one object: a policy is replayed with its binding as the
// cluster runs it today (bindingText: the first by name, or one that
// denies wherever the policy matches when it has none), a binding with the
// policy it names as the cluster runs it today. basis says which, for the
// page. A text that is not one object of kind, or a binding of a policy
// the cluster does not have, is the error: nothing is replayed.
func editorDraft(c ports.Cluster, kind kube.KindID, text string) (draft, basis string, err error) {
	v, err := parseDocs(text)
	if err != nil {
		return "", "", err
	}
	text = strings.TrimRight(text, "\n") + "\n"
	switch {
	case kind == kube.AdmissionPolicies && v.Policy != nil && v.Binding == nil:
		name := v.Policy.Name
		if name == "" {
			return "", "", errors.New("the ValidatingAdmissionPolicy has no metadata.name")
		}
		bt, mine, err := bindingText(c, name, "")
		if err != nil {
			return "", "", err
		}
		return text + "---\n" + bt, policyBasis(name, mine), nil
	case kind == kube.AdmissionPolicyBindings && v.Binding != nil && v.Policy == nil:
		b := v.Binding
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
		return pt + "---\n" + text, fmt.Sprintf("Replayed with the policy %q as the cluster runs it today.", pol.Name), nil
	}
	want := "ValidatingAdmissionPolicy"
	if kind == kube.AdmissionPolicyBindings {
		want = "ValidatingAdmissionPolicyBinding"
	}
	return "", "", fmt.Errorf("the text is not one %s of %s: this editor replays the %s it edits", want, apiVersion, want)
}

// policyBasis says which binding a policy of the editor is replayed with:
// its first deployed binding by name (mine), or none.
func policyBasis(policy string, mine []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) string {
	if len(mine) == 0 {
		return fmt.Sprintf("The cluster has no binding of %q: replayed with a binding that denies wherever the policy matches.", policy)
	}
	s := fmt.Sprintf("Replayed with its binding %q as the cluster runs it today.", mine[0].Name)
	if len(mine) > 1 {
		var others []string
		for _, b := range mine[1:] {
			others = append(others, strconv.Quote(b.Name))
		}
		s += " Its other bindings are not replayed here: " + strings.Join(others, ", ") + "."
	}
	return s
}
