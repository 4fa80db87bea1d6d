package apf

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The spec fields the console's FlowSchema form models; every other field of a
// live object is kept as it is.
const (
	SpecPrecedence    = "matchingPrecedence"
	SpecPriorityLevel = "priorityLevelConfiguration"
	SpecDistinguisher = "distinguisherMethod"
	SpecRules         = "rules"
)

// FormSpecFields are the spec fields the FlowSchema form models, in form order.
var FormSpecFields = []string{SpecPrecedence, SpecPriorityLevel, SpecDistinguisher, SpecRules}

// FormObject is the object the FlowSchema form sends. To create (live nil) it
// is a new FlowSchema of apiVersion named name; to edit, a copy of the live
// object (so labels, annotations and any spec field the form does not model
// stay as they are) with the form's spec fields replaced. The FlowSchema spec
// has the same shape in v1 and v1beta3, so apiVersion may be either.
func FormObject(live *unstructured.Unstructured, apiVersion, name string, spec flowcontrolv1.FlowSchemaSpec) (*unstructured.Unstructured, error) {
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
	for _, f := range FormSpecFields {
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

// StoredDifferently lists the form's spec fields (FormSpecFields) that the API
// server would store (stored, its dry-run answer) other than sent. The API
// server defaults a matching precedence of 0 to 1000 (SetDefaults_FlowSchemaSpec
// in kubernetes/kubernetes pkg/apis/flowcontrol/v1/defaults.go, and v1beta3)
// rather than refusing it, so this is how a 0 is caught before it is stored.
func StoredDifferently(sent, stored flowcontrolv1.FlowSchemaSpec) []string {
	var out []string
	if stored.MatchingPrecedence != sent.MatchingPrecedence {
		out = append(out, SpecPrecedence)
	}
	if stored.PriorityLevelConfiguration.Name != sent.PriorityLevelConfiguration.Name {
		out = append(out, SpecPriorityLevel)
	}
	if (stored.DistinguisherMethod == nil) != (sent.DistinguisherMethod == nil) ||
		(stored.DistinguisherMethod != nil && stored.DistinguisherMethod.Type != sent.DistinguisherMethod.Type) {
		out = append(out, SpecDistinguisher)
	}
	if !equality.Semantic.DeepEqual(stored.Rules, sent.Rules) && (len(stored.Rules) > 0 || len(sent.Rules) > 0) {
		out = append(out, SpecRules)
	}
	return out
}
