package replay

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	engine "github.com/clusterdesk/clusterdesk/internal/replay"
)

const apiVersion = "admissionregistration.k8s.io/v1"

// parseDraft reads the form's text: a ValidatingAdmissionPolicy and a
// ValidatingAdmissionPolicyBinding, as YAML documents in either order.
// Unknown fields are errors, as the API server's strict field validation
// makes them: a misspelt field would otherwise replay as absent.
func parseDraft(text string) (engine.Version, error) {
	v, err := parseDocs(text)
	if err == nil && (v.Policy == nil || v.Binding == nil) {
		err = errors.New("the draft needs a ValidatingAdmissionPolicy and a ValidatingAdmissionPolicyBinding, separated by a line ---")
	}
	return v, err
}

// parseDocs reads the policy and the binding text holds, either or both
// (the YAML editor's text is one of them: editor.go); parseDraft's errors
// but for a missing one.
func parseDocs(text string) (engine.Version, error) {
	var v engine.Version
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(text)))
	for n := 1; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return v, fmt.Errorf("the draft is not YAML: %v", err)
		}
		if strings.TrimSpace(string(doc)) == "" {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return v, fmt.Errorf("document %d is not YAML: %v", n, err)
		}
		if tm.APIVersion != apiVersion {
			return v, fmt.Errorf("document %d: apiVersion %q, want %s", n, tm.APIVersion, apiVersion)
		}
		switch tm.Kind {
		case "ValidatingAdmissionPolicy":
			if v.Policy != nil {
				return v, errors.New("the draft has two policies; replay one policy and one binding")
			}
			v.Policy = &admissionregistrationv1.ValidatingAdmissionPolicy{}
			err = yaml.UnmarshalStrict(doc, v.Policy)
		case "ValidatingAdmissionPolicyBinding":
			if v.Binding != nil {
				return v, errors.New("the draft has two bindings; replay one policy and one binding")
			}
			v.Binding = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
			err = yaml.UnmarshalStrict(doc, v.Binding)
		default:
			return v, fmt.Errorf("document %d is a %q; the draft is a ValidatingAdmissionPolicy and a ValidatingAdmissionPolicyBinding", n, tm.Kind)
		}
		if err != nil {
			return v, fmt.Errorf("document %d (%s): %v", n, tm.Kind, err)
		}
	}
	return v, nil
}

// deployed is what the cluster runs under the draft's names, from the shared
// cache, and its words; nil when either is not deployed (the engine then
// counts every draft verdict as new).
func deployed(c ports.Cluster, draft engine.Version) (*engine.Version, string) {
	p, errP := c.Get(kube.AdmissionPolicies, draft.Policy.Name)
	b, errB := c.Get(kube.AdmissionPolicyBindings, draft.Binding.Name)
	pol, okP := p.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	bnd, okB := b.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
	if errP != nil || errB != nil || !okP || !okB {
		return nil, fmt.Sprintf("Compared with nothing: the cluster has no policy %q with a binding %q, so every verdict of the draft counts as new.", draft.Policy.Name, draft.Binding.Name)
	}
	return &engine.Version{Policy: pol, Binding: bnd}, fmt.Sprintf("Compared with the deployed policy %q and binding %q.", pol.Name, bnd.Name)
}

// deployedText is the form's starting text: the deployed policy and its
// binding named binding, else its first (by name), or a binding to start
// from when it has none.
func deployedText(c ports.Cluster, pol *admissionregistrationv1.ValidatingAdmissionPolicy, binding string) (string, error) {
	pt, err := policyText(pol)
	if err != nil {
		return "", err
	}
	bt, _, err := bindingText(c, pol.Name, binding)
	if err != nil {
		return "", err
	}
	return pt + "---\n" + bt, nil
}

// policyText is pol as a draft's YAML.
func policyText(pol *admissionregistrationv1.ValidatingAdmissionPolicy) (string, error) {
	p := pol.DeepCopy()
	p.TypeMeta = metav1.TypeMeta{APIVersion: apiVersion, Kind: "ValidatingAdmissionPolicy"}
	p.ObjectMeta = metav1.ObjectMeta{Name: p.Name, Labels: p.Labels}
	p.Status = admissionregistrationv1.ValidatingAdmissionPolicyStatus{}
	return draftYAML(p)
}

// bindingText is, as a draft's YAML, the deployed binding of the policy
// named policy that is named binding, else its first by name, else (none
// deployed: mine is empty) a binding that denies wherever the policy
// matches, to start from. mine are the policy's deployed bindings by name.
func bindingText(c ports.Cluster, policy, binding string) (string, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, error) {
	var b *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	all, _ := c.List(kube.AdmissionPolicyBindings)
	var mine []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, o := range all {
		if x, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding); ok && x.Spec.PolicyName == policy {
			mine = append(mine, x)
		}
	}
	slices.SortFunc(mine, func(a, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) int {
		// The binding asked for first, then by name.
		return cmp.Or(-cmp.Compare(b2i(a.Name == binding), b2i(b.Name == binding)), strings.Compare(a.Name, b.Name))
	})
	if len(mine) > 0 {
		b = mine[0].DeepCopy()
		b.ObjectMeta = metav1.ObjectMeta{Name: b.Name, Labels: b.Labels}
	} else {
		b = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: policy},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
	}
	b.TypeMeta = metav1.TypeMeta{APIVersion: apiVersion, Kind: "ValidatingAdmissionPolicyBinding"}
	bt, err := draftYAML(b)
	return bt, mine, err
}

// draftYAML is obj as YAML without what the API server sets (status, the
// null creationTimestamp an empty ObjectMeta marshals): a draft is what a
// person writes.
func draftYAML(obj any) (string, error) {
	raw, err := yaml.Marshal(obj)
	if err != nil {
		return "", err
	}
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	raw, err = yaml.Marshal(m)
	return string(raw), err
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
