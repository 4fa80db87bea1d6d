package present

import (
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/flowschemaform"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// twoRuleForm is a form as a person fills it: two rules, every row kind.
var twoRuleForm = testfixtures.TwoRuleFlowSchemaForm

func TestFlowSchemaObject(t *testing.T) {
	spec, _ := flowschemaform.Spec(twoRuleForm())
	created, err := apf.FormObject(nil, "flowcontrol.apiserver.k8s.io/v1beta3", "batch", spec)
	if err != nil {
		t.Fatal(err)
	}
	if created.GetAPIVersion() != "flowcontrol.apiserver.k8s.io/v1beta3" || created.GetKind() != "FlowSchema" || created.GetName() != "batch" {
		t.Errorf("created: %v", created.Object)
	}
	if back, err := FlowSchemaOf(created); err != nil || !reflect.DeepEqual(back.Spec, spec) {
		t.Errorf("created spec %+v, err %v", back, err)
	}

	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
		"metadata": map[string]any{"name": "batch", "labels": map[string]any{"team": "a"}, "annotations": map[string]any{"note": "keep"}, "resourceVersion": "7"},
		"spec": map[string]any{
			"matchingPrecedence": int64(5), "futureField": "kept",
			"distinguisherMethod": map[string]any{"type": "ByNamespace"},
			"rules":               []any{map[string]any{"subjects": []any{}}},
		},
		"status": map[string]any{"conditions": []any{}},
	}}
	f := twoRuleForm()
	f.Rules, f.Distinguisher = nil, ""
	spec, _ = flowschemaform.Spec(f)
	obj, err := apf.FormObject(live, "ignored", "batch", spec)
	if err != nil {
		t.Fatal(err)
	}
	s := obj.Object["spec"].(map[string]any)
	if s["futureField"] != "kept" || obj.GetLabels()["team"] != "a" || obj.GetAnnotations()["note"] != "keep" {
		t.Errorf("unmodeled fields lost: %v", obj.Object)
	}
	if _, ok := s["rules"]; ok {
		t.Errorf("emptied rules kept: %v", s)
	}
	if _, ok := s["distinguisherMethod"]; ok {
		t.Errorf("distinguisher none kept the live one: %v", s)
	}
	if _, ok := obj.Object["status"]; ok {
		t.Error("status sent")
	}
	if live.Object["spec"].(map[string]any)["rules"] == nil {
		t.Error("the live object was changed")
	}
	if got := UnmodeledSpecFields(live); !slices.Equal(got, []string{"spec.futureField"}) {
		t.Errorf("UnmodeledSpecFields = %q", got)
	}
}

func TestDanglingCondition(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Dangling", "status": "True", "message": "no such level"}}},
	}}
	if msg, ok := DanglingCondition(obj); !ok || msg != "no such level" {
		t.Errorf("DanglingCondition = %q, %v", msg, ok)
	}
	obj.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Dangling", "status": "False"}}}
	if _, ok := DanglingCondition(obj); ok {
		t.Error("Dangling=False reported")
	}
}
