package celmatch

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	celtypes "github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// MaxAuditAnnotationValueLength is where the API server cuts an audit
// annotation's value (maxAuditAnnotationValueLength in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go).
const MaxAuditAnnotationValueLength = 10 * 1024

// AuditAnnotation is one of a policy's auditAnnotations with its outcome.
type AuditAnnotation struct {
	// Key is the annotation's key in the audit event: the policy's name,
	// "/", the auditAnnotation's key (auditAnnotationCollector.publish).
	Key             string
	ValueExpression string
	// Result is "published" (Value is the value), "excluded" (the
	// expression gave null or an empty string, or failed under
	// failurePolicy Ignore) or "error" (Error says why; under failurePolicy
	// Fail it denies the request).
	Result string
	Value  string
	Error  string
	Denies bool
}

// The results of an audit annotation.
const (
	AnnotationPublished = "published"
	AnnotationExcluded  = "excluded"
	AnnotationError     = "error"
)

// compileAuditAnnotations compiles the policy's auditAnnotations as
// compilePolicy in k8s.io/apiserver/pkg/admission/plugin/policy/validating/plugin.go
// does (convertv1AuditAnnotations: string or null, with the policy's
// variables and the same optional variables as the validations).
func compileAuditAnnotations(compiler *celplugin.CompositedCompiler, anns []admissionregistrationv1.AuditAnnotation, vars celplugin.OptionalVariableDeclarations) celplugin.ConditionEvaluator {
	accessors := make([]celplugin.ExpressionAccessor, len(anns))
	for i, a := range anns {
		accessors[i] = &typedExpression{expr: a.ValueExpression, types: []*cel.Type{cel.StringType, cel.NullType}}
	}
	return compiler.CompileCondition(accessors, vars, environment.StoredExpressions)
}

// evaluateAuditAnnotations follows validator.Validate in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/validator.go: the
// auditAnnotations are evaluated after the validations with the params but
// no authorizer, within a fresh RuntimeCELCostBudget; a trimmed non-empty
// string is published, null or "" excluded, an error (or another type)
// excluded under failurePolicy Ignore and denying under Fail. Values are cut
// at MaxAuditAnnotationValueLength as dispatcher.go does. A failure of the
// evaluator as a whole is returned as err: upstream then replaces every
// decision with that one error.
func evaluateAuditAnnotations(ctx context.Context, policy *admissionregistrationv1.ValidatingAdmissionPolicy, eval celplugin.ConditionEvaluator, attrs *admission.VersionedAttributes, req PolicyRequest, params runtime.Object) ([]AuditAnnotation, error) {
	anns := policy.Spec.AuditAnnotations
	if len(anns) == 0 {
		return nil, nil
	}
	fail := policy.Spec.FailurePolicy == nil || *policy.Spec.FailurePolicy == admissionregistrationv1.Fail
	request := celplugin.CreateAdmissionRequest(attrs.Attributes, metav1.GroupVersionResource(req.Resource), metav1.GroupVersionKind(attrs.VersionedKind))
	results, _, err := eval.ForInput(ctx, attrs, request, celplugin.OptionalVariableBindings{VersionedParams: params},
		celplugin.CreateNamespaceObject(req.Namespace), celconfig.RuntimeCELCostBudget)
	if err != nil {
		return nil, err
	}
	out := make([]AuditAnnotation, 0, len(results))
	for i, r := range results {
		if i >= len(anns) {
			break
		}
		a := AuditAnnotation{Key: policy.Name + "/" + anns[i].Key, ValueExpression: strings.TrimSpace(anns[i].ValueExpression)}
		errText := ""
		switch {
		case r.Error != nil:
			errText = r.Error.Error()
		case r.EvalResult == nil || r.EvalResult.Type() == celtypes.NullType:
			a.Result = AnnotationExcluded
		case r.EvalResult.Type() == celtypes.StringType:
			value := strings.TrimSpace(r.EvalResult.Value().(string))
			a.Result = AnnotationExcluded
			if value != "" {
				if len(value) > MaxAuditAnnotationValueLength {
					value = value[:MaxAuditAnnotationValueLength]
				}
				a.Result, a.Value = AnnotationPublished, value
			}
		default:
			errText = fmt.Sprintf("valueExpression '%v' resulted in unsupported return type: %v. Return type must be either string or null.",
				anns[i].ValueExpression, r.EvalResult.Type())
		}
		if errText != "" {
			a.Error = errText
			// auditAnnotationEvaluationForError: Exclude under Ignore, Error
			// (a denial) under Fail; the unsupported type is an error either way.
			a.Result, a.Denies = AnnotationError, fail || r.Error == nil
			if r.Error != nil && !fail {
				a.Result = AnnotationExcluded
			}
		}
		out = append(out, a)
	}
	return out, nil
}
