package replay

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
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

// parseDraft reads the form's text: a ValidatingAdmissionPolicy and any
// number (one at least) of its ValidatingAdmissionPolicyBindings, as YAML
// documents in any order: the replay evaluates the policy once per binding,
// as the API server does. Unknown fields are errors, as the API server's
// strict field validation makes them: a misspelt field would otherwise
// replay as absent. A binding of another policy is an error: the API
// server would not evaluate it with this one.
func parseDraft(text string) (engine.Version, error) {
	v, err := parseDocs(text)
	switch {
	case err != nil:
		return v, err
	case v.Policy == nil || len(v.Bindings) == 0:
		return v, errors.New("the draft needs a ValidatingAdmissionPolicy and at least one ValidatingAdmissionPolicyBinding of it, separated by lines ---")
	}
	for _, b := range v.Bindings {
		if b.Spec.PolicyName != v.Policy.Name {
			return v, fmt.Errorf("the binding %q binds the policy %q, not the draft's policy %q: a draft is one policy and its own bindings", b.Name, b.Spec.PolicyName, v.Policy.Name)
		}
	}
	return v, nil
}

// parseDocs reads the policy and the bindings text holds, any of them (the
// YAML editor's text is one object: editor_draft.go); parseDraft's errors
// but for a missing one and a binding of another policy.
func parseDocs(text string) (engine.Version, error) {
	var v engine.Version
	names := map[string]bool{}
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
				return v, errors.New("the draft has two policies; replay one policy with its bindings")
			}
			v.Policy = &admissionregistrationv1.ValidatingAdmissionPolicy{}
			err = yaml.UnmarshalStrict(doc, v.Policy)
		case "ValidatingAdmissionPolicyBinding":
			b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
			if err = yaml.UnmarshalStrict(doc, b); err == nil {
				if names[b.Name] {
					return v, fmt.Errorf("document %d: the draft has two bindings named %q", n, b.Name)
				}
				names[b.Name] = true
				v.Bindings = append(v.Bindings, b)
			}
		default:
			return v, fmt.Errorf("document %d is a %q; the draft is a ValidatingAdmissionPolicy and its ValidatingAdmissionPolicyBindings", n, tm.Kind)
		}
		if err != nil {
			return v, fmt.Errorf("document %d (%s): %v", n, tm.Kind, err)
		}
	}
	return v, nil
}

// deployed is what the cluster runs under the draft policy's name, from the
// shared cache: the policy with every binding that binds it today, and its
// words; nil when the policy is not deployed (the engine then counts every
// draft verdict as new).
func deployed(c ports.Cluster, draft engine.Version) (*engine.Version, string) {
	o, err := c.Get(kube.AdmissionPolicies, draft.Policy.Name)
	pol, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	if err != nil || !ok {
		return nil, fmt.Sprintf("Compared with nothing: the cluster has no policy %q, so every verdict of the draft counts as new.", draft.Policy.Name)
	}
	mine := deployedBindings(c, pol.Name, "")
	if len(mine) == 0 {
		return &engine.Version{Policy: pol}, fmt.Sprintf("Compared with the deployed policy %q, which no binding binds: it judges nothing, so every verdict of the draft counts as new.", pol.Name)
	}
	return &engine.Version{Policy: pol, Bindings: mine}, fmt.Sprintf("Compared with the deployed policy %q and its %s %s.", pol.Name, plural(len(mine), "binding", "bindings"), quoted(mine))
}

// deployedBindings are the bindings the cluster has of the policy named
// policy: the one named first first, then by name.
func deployedBindings(c ports.Cluster, policy, first string) []*admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	all, _ := c.List(kube.AdmissionPolicyBindings)
	var mine []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, o := range all {
		if x, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding); ok && x.Spec.PolicyName == policy {
			mine = append(mine, x)
		}
	}
	slices.SortFunc(mine, func(a, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) int {
		return cmp.Or(-cmp.Compare(b2i(a.Name == first), b2i(b.Name == first)), strings.Compare(a.Name, b.Name))
	})
	return mine
}

// deployedText is the form's starting text: the deployed policy and every
// binding of it (the one named binding first), or a binding to start from
// when it has none.
func deployedText(c ports.Cluster, pol *admissionregistrationv1.ValidatingAdmissionPolicy, binding string) (string, error) {
	pt, err := policyText(pol)
	if err != nil {
		return "", err
	}
	bt, _, err := bindingsText(c, pol.Name, binding, "")
	if err != nil {
		return "", err
	}
	return pt + bt, nil
}

// policyText is pol as a draft's YAML.
func policyText(pol *admissionregistrationv1.ValidatingAdmissionPolicy) (string, error) {
	p := pol.DeepCopy()
	p.TypeMeta = metav1.TypeMeta{APIVersion: apiVersion, Kind: "ValidatingAdmissionPolicy"}
	p.ObjectMeta = metav1.ObjectMeta{Name: p.Name, Labels: p.Labels}
	p.Status = admissionregistrationv1.ValidatingAdmissionPolicyStatus{}
	return draftYAML(p)
}

// bindingsText is, as a draft's YAML documents each after a line "---",
// the deployed bindings of the policy named policy (the one named first
// first, then by name; the one named except left out), else (none
// deployed: mine is empty) a binding that denies wherever the policy
// matches, to start from. mine are the bindings written.
func bindingsText(c ports.Cluster, policy, first, except string) (string, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, error) {
	var mine []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, b := range deployedBindings(c, policy, first) {
		if b.Name != except {
			mine = append(mine, b)
		}
	}
	var bs []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, b := range mine {
		b = b.DeepCopy()
		b.ObjectMeta = metav1.ObjectMeta{Name: b.Name, Labels: b.Labels}
		bs = append(bs, b)
	}
	if len(mine) == 0 && except == "" {
		bs = append(bs, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: policy},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}})
	}
	var text strings.Builder
	for _, b := range bs {
		b.TypeMeta = metav1.TypeMeta{APIVersion: apiVersion, Kind: "ValidatingAdmissionPolicyBinding"}
		bt, err := draftYAML(b)
		if err != nil {
			return "", nil, err
		}
		text.WriteString("---\n" + bt)
	}
	return text.String(), mine, nil
}

// quoted is the bindings' names, quoted, separated by commas.
func quoted(bs []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) string {
	names := make([]string, 0, len(bs))
	for _, b := range bs {
		names = append(names, strconv.Quote(b.Name))
	}
	return strings.Join(names, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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
