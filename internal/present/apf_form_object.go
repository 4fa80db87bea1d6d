package present

import (
	"slices"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/internal/apf"
)

// UnmodeledSpecFields lists the live object's spec fields the form does not
// show (a newer API version's, say), which an edit keeps.
func UnmodeledSpecFields(live *unstructured.Unstructured) []string {
	spec, _ := live.Object["spec"].(map[string]any)
	var out []string
	for k := range spec {
		if !slices.Contains(apf.FormSpecFields, k) {
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
