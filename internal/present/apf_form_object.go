package present

import (
	"slices"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// formSpecFields are the spec fields the FlowSchema form models; every other
// field of a live object is kept as it is.
var formSpecFields = []string{"matchingPrecedence", "priorityLevelConfiguration", "distinguisherMethod", "rules"}

// FlowSchemaObject is the object the form sends. To create (live nil) it is a
// new FlowSchema of apiVersion named name; to edit, a copy of the live object
// (so labels, annotations and any spec field the form does not model stay as
// they are) with the form's spec fields replaced. The FlowSchema spec has the
// same shape in v1 and v1beta3, so apiVersion may be either.
func FlowSchemaObject(live *unstructured.Unstructured, apiVersion, name string, spec flowcontrolv1.FlowSchemaSpec) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		return nil, err
	}
	var obj *unstructured.Unstructured
	if live == nil {
		obj = &unstructured.Unstructured{Object: map[string]any{}}
		obj.SetAPIVersion(apiVersion)
		obj.SetKind("FlowSchema")
		obj.SetName(name)
	} else {
		obj = live.DeepCopy()
		// Status is the API server's; an update ignores it anyway.
		delete(obj.Object, "status")
	}
	target, ok := obj.Object["spec"].(map[string]any)
	if !ok {
		target = map[string]any{}
	}
	for _, f := range formSpecFields {
		if v, ok := m[f]; ok {
			target[f] = v
		} else {
			// An empty field the form holds replaces the live one: a form
			// without rules sends no rules.
			delete(target, f)
		}
	}
	obj.Object["spec"] = target
	return obj, nil
}

// UnmodeledSpecFields lists the live object's spec fields the form does not
// show (a newer API version's, say), which an edit keeps.
func UnmodeledSpecFields(live *unstructured.Unstructured) []string {
	spec, _ := live.Object["spec"].(map[string]any)
	var out []string
	for k := range spec {
		if !slices.Contains(formSpecFields, k) {
			out = append(out, "spec."+k)
		}
	}
	slices.Sort(out)
	return out
}

// FlowSchemaOf reads a FlowSchema (v1 or v1beta3, the same shape) from an
// unstructured object.
func FlowSchemaOf(obj *unstructured.Unstructured) (*flowcontrolv1.FlowSchema, error) {
	var fs flowcontrolv1.FlowSchema
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &fs); err != nil {
		return nil, err
	}
	return &fs, nil
}

// DanglingCondition reports the Dangling condition of a FlowSchema the API
// server returned, when it is True.
func DanglingCondition(obj *unstructured.Unstructured) (string, bool) {
	fs, err := FlowSchemaOf(obj)
	if err != nil {
		return "", false
	}
	if c, ok := danglingCondition(fs); ok && c.Status == flowcontrolv1.ConditionTrue {
		return c.Message, true
	}
	return "", false
}

// ServerChanges compares the spec the form sent with the object the API
// server answered (a dry run), by form field key: where the server would store
// something other than what was typed. The API server defaults a matching
// precedence of 0 to 1000 (SetDefaults_FlowSchemaSpec, in v1 and v1beta3)
// rather than refusing it, so this is how a 0 is caught before it is stored.
func ServerChanges(sent flowcontrolv1.FlowSchemaSpec, answer *unstructured.Unstructured) map[string][]string {
	got, err := FlowSchemaOf(answer)
	if err != nil {
		return nil
	}
	out := map[string][]string{}
	if got.Spec.MatchingPrecedence != sent.MatchingPrecedence {
		msg := "The API server would store " + itoa(int(got.Spec.MatchingPrecedence)) + ", not " + itoa(int(sent.MatchingPrecedence)) + "."
		if sent.MatchingPrecedence == 0 {
			msg += " It takes 0 as “not set” and applies its default: give a value from 1 to 10000."
		}
		out[FormPrecedence] = append(out[FormPrecedence], msg)
	}
	if got.Spec.PriorityLevelConfiguration.Name != sent.PriorityLevelConfiguration.Name {
		out[FormPriorityLevel] = append(out[FormPriorityLevel], "The API server would store "+got.Spec.PriorityLevelConfiguration.Name+".")
	}
	if (got.Spec.DistinguisherMethod == nil) != (sent.DistinguisherMethod == nil) ||
		(got.Spec.DistinguisherMethod != nil && got.Spec.DistinguisherMethod.Type != sent.DistinguisherMethod.Type) {
		out[FormDistinguisher] = append(out[FormDistinguisher], "The API server would store another distinguisher; see the preview.")
	}
	if !equality.Semantic.DeepEqual(got.Spec.Rules, sent.Rules) && (len(got.Spec.Rules) > 0 || len(sent.Rules) > 0) {
		out["rules"] = append(out["rules"], "The API server would store the rules differently; see the preview.")
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
