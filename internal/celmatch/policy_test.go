package celmatch

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

func TestEvaluatePolicy(t *testing.T) {
	cm := func(data map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "default"}, "data": data}
	}
	req := func(obj map[string]any) PolicyRequest {
		return PolicyRequest{Request: Request{Operation: admissionregistrationv1.Create,
			Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "default", Object: obj}}
	}
	tests := []struct {
		name      string
		spec      admissionregistrationv1.ValidatingAdmissionPolicySpec
		in        PolicyRequest
		want      []string // results per validation
		message   string   // first validation's message
		skipped   string
		errDenies bool
	}{
		{name: "variables and messageExpression",
			spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				Variables:   []admissionregistrationv1.Variable{{Name: "n", Expression: "object.data.size()"}},
				Validations: []admissionregistrationv1.Validation{{Expression: "variables.n < 2", MessageExpression: "'has ' + string(variables.n)", Message: "static"}}},
			in: req(cm(map[string]any{"a": "1", "b": "2"})), want: []string{"fail"}, message: "has 2"},
		{name: "message when messageExpression is not a one-liner",
			spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				Validations: []admissionregistrationv1.Validation{{Expression: "false", MessageExpression: "'a\\nb'", Message: "static"}}},
			in: req(cm(nil)), want: []string{"fail"}, message: "static"},
		{name: "expression as message",
			spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{Validations: []admissionregistrationv1.Validation{{Expression: " 1 > 2 "}}},
			in:   req(cm(nil)), want: []string{"fail"}, message: "failed expression: 1 > 2"},
		{name: "pass", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{Validations: []admissionregistrationv1.Validation{{Expression: "true"}}},
			in: req(cm(nil)), want: []string{"pass"}},
		{name: "params",
			spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
				Validations: []admissionregistrationv1.Validation{{Expression: "object.data.t == params.data.t"}}},
			in: func() PolicyRequest {
				r := req(cm(map[string]any{"t": "x"}))
				r.Params = cm(map[string]any{"t": "y"})
				return r
			}(), want: []string{"fail"}, message: "failed expression: object.data.t == params.data.t"},
		{name: "matchConditions skip",
			spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "yes", Expression: "true"}, {Name: "no", Expression: "false"}},
				Validations:     []admissionregistrationv1.Validation{{Expression: "false"}}},
			in: req(cm(nil)), skipped: "no"},
		{name: "runtime error under Ignore does not deny",
			spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
				Validations: []admissionregistrationv1.Validation{{Expression: "object.data.missing == 'x'"}}},
			in: req(cm(map[string]any{})), want: []string{"error"}},
		{name: "compile error under Fail denies",
			spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{Validations: []admissionregistrationv1.Validation{{Expression: "object.("}}},
			in:   req(cm(nil)), want: []string{"error"}, errDenies: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: tt.spec}
			p.Name = "p"
			out := EvaluatePolicy(context.Background(), p, tt.in, nil)
			if out.Skipped != tt.skipped {
				t.Fatalf("skipped %q, want %q (%+v)", out.Skipped, tt.skipped, out)
			}
			if len(out.Validations) != len(tt.want) {
				t.Fatalf("validations %+v, want %v", out.Validations, tt.want)
			}
			for i, w := range tt.want {
				if out.Validations[i].Result != w {
					t.Errorf("validation %d: %q, want %q (%s)", i, out.Validations[i].Result, w, out.Validations[i].Message)
				}
			}
			if tt.message != "" && out.Validations[0].Message != tt.message {
				t.Errorf("message %q, want %q", out.Validations[0].Message, tt.message)
			}
			if len(tt.want) > 0 && tt.want[0] == "error" && out.Validations[0].Denies != tt.errDenies {
				t.Errorf("error denies %v, want %v: %s", out.Validations[0].Denies, tt.errDenies, out.Validations[0].Message)
			}
			if len(tt.want) > 0 && tt.want[0] == "fail" && (!out.Validations[0].Denies || !strings.EqualFold(out.Validations[0].Reason, "Invalid")) {
				t.Errorf("a failure denies with reason Invalid: %+v", out.Validations[0])
			}
		})
	}
}
