package celmatch

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"errors"
	"github.com/google/cel-go/cel"
	celtypes "github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// policyEnv is the ValidatingAdmissionPolicy plugin's composition template:
// getCompositionEnvTemplateWithStrictCost in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/plugin.go.
var policyEnv = sync.OnceValue(func() *environment.EnvSet {
	return environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
})

// Validation is one validation of a policy with its outcome.
type Validation struct {
	Expression string
	// Result is "pass", "fail" or "error" (upstream EvalAdmit, EvalDeny, EvalError).
	Result string
	// Message is what the API server says when it fails: the
	// messageExpression's value, else message, else "failed expression: …";
	// the error text for an error.
	Message string
	Reason  string // the status reason of a failure (Invalid when unset)
	// Denies: the failure (or error under failurePolicy Fail) counts
	// against the request, by the binding's validationActions.
	Denies bool
	// AsksAuthorizer: the result may stand on an `authorizer` check, directly
	// or through the policy's variables (asksAuthorizer).
	AsksAuthorizer bool
}

// PolicyOutcome is the evaluation of one policy for one binding and param.
type PolicyOutcome struct {
	// Conditions are the policy's matchConditions with their results;
	// Skipped names the first false one (the policy's validations are not
	// evaluated then).
	Conditions []Condition
	Skipped    string
	// Error is a compile error or a matchConditions error, which failurePolicy
	// decides (ErrorDenies).
	Error       string
	ErrorDenies bool
	Validations []Validation
	// AuditAnnotations are the policy's auditAnnotations with their values
	// (evaluated after the validations, as the API server does).
	AuditAnnotations []AuditAnnotation
	Elapsed          time.Duration
}

// PolicyRequest is a Request with what a policy also sees.
type PolicyRequest struct {
	Request
	// Params is the param object (nil: none, `params` is null).
	Params map[string]any
	// Namespace is namespaceObject (nil for cluster-scoped requests).
	Namespace *corev1.Namespace
}

// EvaluatePolicy evaluates policy for req as the ValidatingAdmissionPolicy
// plugin does: compiled as compilePolicy in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/plugin.go (the same
// composited compiler and variable set: object, oldObject, request, params,
// namespaceObject, variables, authorizer), evaluated as validator.Validate in
// .../policy/validating/validator.go with RuntimeCELCostBudget per binding
// and param, as dispatcher.go calls it. The validating package itself is not
// imported: it drags the API server's tracing and egress (gRPC,
// OpenTelemetry) into the console's binary. auditAnnotations are evaluated
// too (audit_annotations.go): they change only the audit log, and deny only
// when their own expression fails under failurePolicy Fail. req.Resource is the resource
// the policy matched (an equivalent under matchPolicy Equivalent).
func EvaluatePolicy(ctx context.Context, policy *admissionregistrationv1.ValidatingAdmissionPolicy, req PolicyRequest, authz authorizer.UnconditionalAuthorizer) PolicyOutcome {
	start := time.Now()
	out := PolicyOutcome{}
	spec := policy.Spec
	fail := spec.FailurePolicy == nil || *spec.FailurePolicy == admissionregistrationv1.Fail
	hasParams := spec.ParamKind != nil
	optionalVars := celplugin.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	messageVars := celplugin.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: false}
	compiler, err := celplugin.NewCompositedCompiler(policyEnv())
	if err != nil {
		out.Error, out.ErrorDenies = err.Error(), fail
		return out
	}
	variables := make([]celplugin.NamedExpressionAccessor, len(spec.Variables))
	for i, v := range spec.Variables {
		variables[i] = &typedExpression{name: v.Name, expr: v.Expression, types: []*cel.Type{cel.AnyType, cel.DynType}}
	}
	compiler.CompileAndStoreVariables(variables, optionalVars, environment.StoredExpressions)

	attrs := versionedAttributes(req.Request)
	var params runtime.Object
	if req.Params != nil {
		params = &unstructured.Unstructured{Object: req.Params}
	}
	// The matchConditions first, as validator.Validate does; evaluated here
	// with the upstream matcher so the answer can name the false one.
	if len(spec.MatchConditions) > 0 {
		accessors := make([]celplugin.ExpressionAccessor, len(spec.MatchConditions))
		vars := policyVariables(spec)
		for i := range spec.MatchConditions {
			accessors[i] = (*matchconditions.MatchCondition)(&spec.MatchConditions[i])
			mc := spec.MatchConditions[i]
			out.Conditions = append(out.Conditions, Condition{Name: mc.Name, Expression: mc.Expression, AsksAuthorizer: asksAuthorizer(mc.Expression, vars)})
		}
		condEval := compiler.CompileCondition(accessors, optionalVars, environment.StoredExpressions)
		m := matchconditions.NewMatcher(condEval, spec.FailurePolicy, "policy", "validate", policy.Name)
		res := m.Match(ctx, attrs, params, authz)
		markConditions(ctx, &out, condEval, req, params, authz)
		switch {
		case res.Error != nil:
			out.Error, out.ErrorDenies = res.Error.Error(), fail
			out.Elapsed = time.Since(start)
			return out
		case !res.Matches:
			out.Skipped = res.FailedConditionName
			out.Elapsed = time.Since(start)
			return out
		}
	}
	validations := make([]celplugin.ExpressionAccessor, len(spec.Validations))
	messages := make([]celplugin.ExpressionAccessor, len(spec.Validations))
	for i, v := range spec.Validations {
		validations[i] = &typedExpression{expr: v.Expression, types: []*cel.Type{cel.BoolType}}
		if v.MessageExpression != "" {
			messages[i] = &typedExpression{expr: v.MessageExpression, types: []*cel.Type{cel.StringType}}
		}
	}
	annotations := compileAuditAnnotations(compiler, spec.AuditAnnotations, optionalVars)
	var evaluated bool
	out.Validations, evaluated = validate(ctx, spec, attrs, req, params,
		compiler.CompileCondition(validations, optionalVars, environment.StoredExpressions),
		compiler.CompileCondition(messages, messageVars, environment.StoredExpressions), authz)
	if evaluated {
		anns, err := evaluateAuditAnnotations(ctx, policy, annotations, attrs, req, params)
		if err != nil {
			// validator.Validate: the one error replaces every decision.
			out.Validations = []Validation{{Result: "error", Message: err.Error(), Denies: fail}}
		}
		out.AuditAnnotations = anns
	}
	out.Elapsed = time.Since(start)
	return out
}

// markConditions fills in each matchCondition's own result for the answer;
// the decision stays the upstream matcher's.
func markConditions(ctx context.Context, out *PolicyOutcome, eval celplugin.ConditionEvaluator, req PolicyRequest, params runtime.Object, authz authorizer.UnconditionalAuthorizer) {
	va := versionedAttributes(req.Request)
	request := celplugin.CreateAdmissionRequest(va.Attributes, metav1.GroupVersionResource(req.Resource), metav1.GroupVersionKind(va.VersionedKind))
	results, _, err := eval.ForInput(ctx, va, request, celplugin.OptionalVariableBindings{VersionedParams: params, Authorizer: authz}, nil, celconfig.RuntimeCELCostBudgetMatchConditions)
	for i := range out.Conditions {
		switch {
		case err != nil:
			out.Conditions[i].Result, out.Conditions[i].Error = Error, err.Error()
		case i >= len(results):
		case results[i].Error != nil:
			out.Conditions[i].Result, out.Conditions[i].Error = Error, results[i].Error.Error()
		case results[i].EvalResult != nil && results[i].EvalResult.Value() == true:
			out.Conditions[i].Result = True
		default:
			out.Conditions[i].Result = False
		}
	}
}

// validate follows validator.Validate in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/validator.go: every
// validation within one cost budget, the messageExpressions within what is
// left, a false validation failing with messageExpression, else message,
// else "failed expression: …"; an error failing by failurePolicy.
//
// evaluated is false when the evaluator failed as a whole (its one error is
// the only entry), which ends upstream's Validate before the auditAnnotations.
func validate(ctx context.Context, spec admissionregistrationv1.ValidatingAdmissionPolicySpec, attrs *admission.VersionedAttributes, req PolicyRequest, params runtime.Object, validations, messages celplugin.ConditionEvaluator, authz authorizer.UnconditionalAuthorizer) (_ []Validation, evaluated bool) {
	fail := spec.FailurePolicy == nil || *spec.FailurePolicy != admissionregistrationv1.Ignore
	request := celplugin.CreateAdmissionRequest(attrs.Attributes, metav1.GroupVersionResource(req.Resource), metav1.GroupVersionKind(attrs.VersionedKind))
	ns := celplugin.CreateNamespaceObject(req.Namespace)
	results, remaining, err := validations.ForInput(ctx, attrs, request, celplugin.OptionalVariableBindings{VersionedParams: params, Authorizer: authz}, ns, celconfig.RuntimeCELCostBudget)
	if err != nil {
		return []Validation{{Result: "error", Message: err.Error(), Denies: fail}}, false
	}
	msgs, _, msgErr := messages.ForInput(ctx, attrs, request, celplugin.OptionalVariableBindings{VersionedParams: params}, ns, remaining)
	out := make([]Validation, len(results))
	vars := policyVariables(spec)
	for i, r := range results {
		v := spec.Validations[i]
		o := Validation{Expression: strings.TrimSpace(v.Expression), AsksAuthorizer: asksAuthorizer(v.Expression, vars)}
		switch {
		case r.Error != nil:
			o.Result, o.Message, o.Denies = "error", r.Error.Error(), fail
		case errors.Is(msgErr, apiservercel.ErrInternal) || errors.Is(msgErr, apiservercel.ErrOutOfBudget):
			o.Result, o.Message, o.Denies = "error", fmt.Sprintf("failed messageExpression: %s", msgErr), fail
		case r.EvalResult != celtypes.True:
			o.Result, o.Denies = "fail", true
			o.Reason = string(metav1.StatusReasonInvalid)
			if v.Reason != nil {
				o.Reason = string(*v.Reason)
			}
			o.Message = failureMessage(v, msgs, i)
		default:
			o.Result = "pass"
		}
		out[i] = o
	}
	return out, true
}

// failureMessage is validator.Validate's choice of message: a one-line
// messageExpression value of at most MaxEvaluatedMessageExpressionSizeBytes,
// else message, else the expression.
func failureMessage(v admissionregistrationv1.Validation, msgs []celplugin.EvaluationResult, i int) string {
	var message string
	if i < len(msgs) && msgs[i].Error == nil && msgs[i].EvalResult != nil {
		if s, ok := msgs[i].EvalResult.Value().(string); ok {
			message = strings.TrimSpace(s)
			if len(message) > celconfig.MaxEvaluatedMessageExpressionSizeBytes || strings.ContainsAny(message, "\n") {
				message = ""
			}
		}
	}
	if message == "" {
		message = strings.TrimSpace(v.Message)
	}
	if message == "" {
		message = fmt.Sprintf("failed expression: %v", strings.TrimSpace(v.Expression))
	}
	return message
}

// typedExpression is a validation, messageExpression or variable as
// plugin.go hands it to the compiler (ValidationCondition,
// MessageExpressionCondition, Variable in .../policy/validating).
type typedExpression struct {
	name, expr string
	types      []*cel.Type
}

func (t *typedExpression) GetExpression() string    { return t.expr }
func (t *typedExpression) ReturnTypes() []*cel.Type { return t.types }
func (t *typedExpression) GetName() string          { return t.name }
