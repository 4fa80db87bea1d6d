package celmatch

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// TestAuditAnnotations evaluates auditAnnotations with the upstream compiler
// and checks the outcome rules of validator.Validate and dispatcher.go in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating.
func TestAuditAnnotations(t *testing.T) {
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "default"},
		"data": map[string]any{"owner": "  team-blue  ", "big": strings.Repeat("x", 12*1024)}}
	req := PolicyRequest{Request: Request{Operation: admissionregistrationv1.Create,
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespace: "default", Object: obj},
		Params: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "p"}, "data": map[string]any{"tier": "gold"}}}
	tests := []struct {
		name, expr string
		ignore     bool
		result     string
		value      string // published value (a prefix for the long one)
		denies     bool
	}{
		{name: "published, trimmed", expr: "string(object.data.owner)", result: AnnotationPublished, value: "team-blue"},
		{name: "with params and variables", expr: "params.data.tier + '/' + variables.n", result: AnnotationPublished, value: "gold/c"},
		{name: "null excluded", expr: "null", result: AnnotationExcluded},
		{name: "empty excluded", expr: "'  '", result: AnnotationExcluded},
		{name: "error under Ignore excluded", expr: "string(object.data.missing)", ignore: true, result: AnnotationExcluded},
		{name: "error under Fail denies", expr: "string(object.data.missing)", result: AnnotationError, denies: true},
		{name: "cut at 10 KiB", expr: "string(object.data.big)", result: AnnotationPublished, value: strings.Repeat("x", MaxAuditAnnotationValueLength)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := admissionregistrationv1.Fail
			if tt.ignore {
				fp = admissionregistrationv1.Ignore
			}
			p := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: &fp, ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
				Variables:        []admissionregistrationv1.Variable{{Name: "n", Expression: "object.metadata.name"}},
				Validations:      []admissionregistrationv1.Validation{{Expression: "true"}},
				AuditAnnotations: []admissionregistrationv1.AuditAnnotation{{Key: "who", ValueExpression: tt.expr}}}}
			p.Name = "pol"
			out := EvaluatePolicy(context.Background(), p, req, nil)
			if len(out.AuditAnnotations) != 1 {
				t.Fatalf("audit annotations %+v (outcome %+v)", out.AuditAnnotations, out)
			}
			a := out.AuditAnnotations[0]
			if a.Key != "pol/who" || a.Result != tt.result || a.Value != tt.value || a.Denies != tt.denies {
				t.Errorf("got key %q result %q value %.40q denies %v (error %q); want %q %.40q %v", a.Key, a.Result, a.Value, a.Denies, a.Error, tt.result, tt.value, tt.denies)
			}
		})
	}
	// An expression that is not of type string or null does not compile
	// (object is dyn: `object.data.owner` must be wrapped in string()):
	// excluded under Ignore, a denial under Fail, as the API server does.
	for _, fp := range []admissionregistrationv1.FailurePolicyType{admissionregistrationv1.Ignore, admissionregistrationv1.Fail} {
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(fp),
			AuditAnnotations: []admissionregistrationv1.AuditAnnotation{{Key: "n", ValueExpression: "object.data.owner"}}}}
		p.Name = "pol"
		out := EvaluatePolicy(context.Background(), p, PolicyRequest{Request: req.Request}, nil)
		if len(out.AuditAnnotations) != 1 || out.AuditAnnotations[0].Denies != (fp == admissionregistrationv1.Fail) ||
			!strings.Contains(out.AuditAnnotations[0].Error, "must evaluate to one of") {
			t.Errorf("%s, a dyn value: %+v", fp, out.AuditAnnotations)
		}
	}
}
