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
	out := CompilePolicy(policy).evaluate(ctx, req, authz, true)
	out.Elapsed = time.Since(start)
	return out
}

// CompiledPolicy is a policy compiled once, as the API server compiles it
// once per policy generation (compilePolicy in
// k8s.io/apiserver/pkg/admission/plugin/policy/validating/plugin.go), for
// the evaluation of many requests (the replay of recorded writes). Safe for
// concurrent use: each evaluation has its own composition context.
type CompiledPolicy struct {
	policy                                         *admissionregistrationv1.ValidatingAdmissionPolicy
	fail                                           bool
	hasParams                                      bool
	compiler                                       *celplugin.CompositedCompiler
	conditions, validations, messages, annotations celplugin.ConditionEvaluator
	// errs are the compile errors of the variables and expressions, in
	// the order of the spec; err a failure to build the compiler.
	errs []error
	err  error
}

// CompilePolicy compiles policy's variables, matchConditions, validations,
// messageExpressions and auditAnnotations.
func CompilePolicy(policy *admissionregistrationv1.ValidatingAdmissionPolicy) *CompiledPolicy {
	spec := policy.Spec
	c := &CompiledPolicy{policy: policy, fail: spec.FailurePolicy == nil || *spec.FailurePolicy == admissionregistrationv1.Fail,
		hasParams: spec.ParamKind != nil}
	optionalVars := celplugin.OptionalVariableDeclarations{HasParams: c.hasParams, HasAuthorizer: true}
	messageVars := celplugin.OptionalVariableDeclarations{HasParams: c.hasParams, HasAuthorizer: false}
	c.compiler, c.err = celplugin.NewCompositedCompiler(policyEnv())
	if c.err != nil {
		return c
	}
	for _, v := range spec.Variables {
		r := c.compiler.CompileAndStoreVariable(&typedExpression{name: v.Name, expr: v.Expression, types: []*cel.Type{cel.AnyType, cel.DynType}}, optionalVars, environment.StoredExpressions)
		if r.Error != nil {
			c.errs = append(c.errs, fmt.Errorf("variables[%q]: %s", v.Name, r.Error.Detail))
		}
	}
	if len(spec.MatchConditions) > 0 {
		accessors := make([]celplugin.ExpressionAccessor, len(spec.MatchConditions))
		for i := range spec.MatchConditions {
			accessors[i] = (*matchconditions.MatchCondition)(&spec.MatchConditions[i])
			c.check(accessors[i], optionalVars, "matchConditions[%q]", spec.MatchConditions[i].Name)
		}
		c.conditions = c.compiler.CompileCondition(accessors, optionalVars, environment.StoredExpressions)
	}
	validations := make([]celplugin.ExpressionAccessor, len(spec.Validations))
	messages := make([]celplugin.ExpressionAccessor, len(spec.Validations))
	for i, v := range spec.Validations {
		validations[i] = &typedExpression{expr: v.Expression, types: []*cel.Type{cel.BoolType}}
		c.check(validations[i], optionalVars, "validations[%d].expression", i)
		if v.MessageExpression != "" {
			messages[i] = &typedExpression{expr: v.MessageExpression, types: []*cel.Type{cel.StringType}}
			c.check(messages[i], messageVars, "validations[%d].messageExpression", i)
		}
	}
	c.validations = c.compiler.CompileCondition(validations, optionalVars, environment.StoredExpressions)
	c.messages = c.compiler.CompileCondition(messages, messageVars, environment.StoredExpressions)
	c.annotations = compileAuditAnnotations(c.compiler, spec.AuditAnnotations, optionalVars)
	for i, a := range spec.AuditAnnotations {
		c.check(&typedExpression{expr: a.ValueExpression, types: []*cel.Type{cel.StringType, cel.NullType}}, optionalVars, "auditAnnotations[%d].valueExpression", i)
	}
	return c
}

// check compiles one expression (with the policy's variables) only to name
// its compile error, which the evaluators report without saying whose.
func (c *CompiledPolicy) check(e celplugin.ExpressionAccessor, vars celplugin.OptionalVariableDeclarations, format string, args ...any) {
	if r := c.compiler.CompileCELExpression(e, vars, environment.StoredExpressions); r.Error != nil {
		c.errs = append(c.errs, fmt.Errorf(format+": %s", append(args, r.Error.Detail)...))
	}
}

// Err is why the policy cannot be evaluated as written: the compiler could
// not be built, or an expression does not compile (each named). The API
// server admits such a policy and fails its requests by failurePolicy; a
// draft with one is refused before a replay.
func (c *CompiledPolicy) Err() error {
	if c.err != nil {
		return c.err
	}
	return errors.Join(c.errs...)
}

// Evaluate evaluates the compiled policy for req as EvaluatePolicy does,
// without the parts only a person reads (each matchCondition's own result,
// whether a result stands on an authorizer check).
func (c *CompiledPolicy) Evaluate(ctx context.Context, req PolicyRequest, authz authorizer.UnconditionalAuthorizer) PolicyOutcome {
	return c.evaluate(ctx, req, authz, false)
}

func (c *CompiledPolicy) evaluate(ctx context.Context, req PolicyRequest, authz authorizer.UnconditionalAuthorizer, detail bool) PolicyOutcome {
	out := PolicyOutcome{}
	if c.err != nil {
		out.Error, out.ErrorDenies = c.err.Error(), c.fail
		return out
	}
	spec := c.policy.Spec
	attrs := versionedAttributes(req.Request)
	var params runtime.Object
	if req.Params != nil {
		params = &unstructured.Unstructured{Object: req.Params}
	}
	// The matchConditions first, as validator.Validate does; evaluated here
	// with the upstream matcher so the answer can name the false one.
	if c.conditions != nil {
		var vars map[string]string
		if detail {
			vars = policyVariables(spec)
			for _, mc := range spec.MatchConditions {
				out.Conditions = append(out.Conditions, Condition{Name: mc.Name, Expression: mc.Expression, AsksAuthorizer: asksAuthorizer(mc.Expression, vars)})
			}
		}
		m := matchconditions.NewMatcher(c.conditions, spec.FailurePolicy, "policy", "validate", c.policy.Name)
		res := m.Match(ctx, attrs, params, authz)
		if detail {
			markConditions(ctx, &out, c.conditions, req, params, authz)
		}
		switch {
		case res.Error != nil:
			out.Error, out.ErrorDenies = res.Error.Error(), c.fail
			return out
		case !res.Matches:
			out.Skipped = res.FailedConditionName
			return out
		}
	}
	var evaluated bool
	out.Validations, evaluated = validate(ctx, spec, attrs, req, params, c.validations, c.messages, authz, detail)
	if evaluated {
		anns, err := evaluateAuditAnnotations(ctx, c.policy, c.annotations, attrs, req, params)
		if err != nil {
			// validator.Validate: the one error replaces every decision.
			out.Validations = []Validation{{Result: "error", Message: err.Error(), Denies: c.fail}}
		}
		out.AuditAnnotations = anns
	}
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
func validate(ctx context.Context, spec admissionregistrationv1.ValidatingAdmissionPolicySpec, attrs *admission.VersionedAttributes, req PolicyRequest, params runtime.Object, validations, messages celplugin.ConditionEvaluator, authz authorizer.UnconditionalAuthorizer, detail bool) (_ []Validation, evaluated bool) {
	fail := spec.FailurePolicy == nil || *spec.FailurePolicy != admissionregistrationv1.Ignore
	request := celplugin.CreateAdmissionRequest(attrs.Attributes, metav1.GroupVersionResource(req.Resource), metav1.GroupVersionKind(attrs.VersionedKind))
	ns := celplugin.CreateNamespaceObject(req.Namespace)
	results, remaining, err := validations.ForInput(ctx, attrs, request, celplugin.OptionalVariableBindings{VersionedParams: params, Authorizer: authz}, ns, celconfig.RuntimeCELCostBudget)
	if err != nil {
		return []Validation{{Result: "error", Message: err.Error(), Denies: fail}}, false
	}
	msgs, _, msgErr := messages.ForInput(ctx, attrs, request, celplugin.OptionalVariableBindings{VersionedParams: params}, ns, remaining)
	out := make([]Validation, len(results))
	var vars map[string]string
	if detail {
		vars = policyVariables(spec)
	}
	for i, r := range results {
		v := spec.Validations[i]
		o := Validation{Expression: strings.TrimSpace(v.Expression)}
		if detail {
			o.AsksAuthorizer = asksAuthorizer(v.Expression, vars)
		}
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
