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
	for _, field := range apf.StoredDifferently(sent, got.Spec) {
		switch field {
		case apf.SpecPrecedence:
			msg := "The API server would store " + itoa(int(got.Spec.MatchingPrecedence)) + ", not " + itoa(int(sent.MatchingPrecedence)) + "."
			if sent.MatchingPrecedence == 0 {
				msg += " It takes 0 as “not set” and applies its default: give a value from 1 to 10000."
			}
			out[FormPrecedence] = append(out[FormPrecedence], msg)
		case apf.SpecPriorityLevel:
			out[FormPriorityLevel] = append(out[FormPriorityLevel], "The API server would store "+got.Spec.PriorityLevelConfiguration.Name+".")
		case apf.SpecDistinguisher:
			out[FormDistinguisher] = append(out[FormDistinguisher], "The API server would store another distinguisher; see the preview.")
		case apf.SpecRules:
			out["rules"] = append(out["rules"], "The API server would store the rules differently; see the preview.")
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
