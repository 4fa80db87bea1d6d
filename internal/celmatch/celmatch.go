// Package celmatch evaluates admission webhooks' matchConditions the way the
// API server does, with the API server's own CEL library
// (k8s.io/apiserver/pkg/admission/plugin/cel and .../webhook/matchconditions):
// the same environment, variables (object, oldObject, request, authorizer)
// and cost limits. It knows nothing of HTTP or of how authorization checks are
// answered: the caller passes an authorizer.
package celmatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	celtypes "github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"
)

// compiler is the webhook dispatcher's: NewWebhook in
// k8s.io/apiserver/pkg/admission/plugin/webhook/generic/webhook.go builds it
// once from the base environment at the default compatibility version. Building
// the environment takes milliseconds, so it is built once, on first use.
var compiler = sync.OnceValue(func() celplugin.ConditionCompiler {
	return celplugin.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
})

// User is the identity the request is made as (request.userInfo, and whom
// authorizer checks are about).
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// Request is what the dispatcher knows of an API request when it evaluates
// matchConditions.
type Request struct {
	Operation   admissionregistrationv1.OperationType
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	// Object and OldObject are the objects as the user gave them; nil when
	// the operation has none (oldObject on CREATE, object on DELETE).
	Object, OldObject map[string]any
	User              User
	DryRun            bool
}

// Result of one condition.
type Result string

// The results a condition can have.
const (
	True  Result = "true"
	False Result = "false"
	Error Result = "error"
)

// Condition is one matchCondition with its result.
type Condition struct {
	Name, Expression string
	Result           Result
	Error            string // the CEL error text when Result is Error
	// AsksAuthorizer: the result may stand on an `authorizer` check
	// (asksAuthorizer), so it is unknown when such a check could not be asked.
	AsksAuthorizer bool
}

// Decision is what the API server does with the webhook after its
// matchConditions.
type Decision string

// The decisions, from matcher.go's MatchResult.
const (
	Call   Decision = "call"   // every condition true
	Skip   Decision = "skip"   // a condition false, or an error with failurePolicy Ignore
	Reject Decision = "reject" // an error with failurePolicy Fail: the request fails, the webhook is not called
)

// Outcome is the evaluation of one webhook's matchConditions.
type Outcome struct {
	Conditions []Condition
	Decision   Decision
	// FailedCondition names the first false condition (Skip).
	FailedCondition string
	// Error is the aggregated error the API server rejects the request with (Reject).
	Error string
	// Elapsed is the time the evaluation took, authorization checks included.
	Elapsed time.Duration
}

// Evaluate evaluates conds for req as the dispatcher does for a webhook with
// failurePolicy fp (nil: Fail, the API default). authz answers the
// `authorizer` checks; it sees the user of req. The cost budget is the API
// server's per webhook (RuntimeCELCostBudgetMatchConditions); ctx bounds the
// time (CEL evaluation and the authorization checks stop at its deadline).
func Evaluate(ctx context.Context, conds []admissionregistrationv1.MatchCondition, fp *admissionregistrationv1.FailurePolicyType, req Request, authz authorizer.UnconditionalAuthorizer) Outcome {
	start := time.Now()
	accessors := make([]celplugin.ExpressionAccessor, len(conds))
	for i, c := range conds {
		accessors[i] = &matchconditions.MatchCondition{Name: c.Name, Expression: c.Expression}
	}
	// The options of GetCompiledMatcher in
	// k8s.io/apiserver/pkg/admission/plugin/webhook/accessors.go.
	evaluator := compiler().CompileCondition(accessors,
		celplugin.OptionalVariableDeclarations{HasParams: false, HasAuthorizer: true},
		environment.StoredExpressions)
	attrs := versionedAttributes(req)
	out := Outcome{Conditions: make([]Condition, len(conds))}
	for i, c := range conds {
		out.Conditions[i] = Condition{Name: c.Name, Expression: c.Expression, AsksAuthorizer: asksAuthorizer(c.Expression, nil)}
	}
	request := celplugin.CreateAdmissionRequest(attrs.Attributes, metav1.GroupVersionResource(req.Resource), metav1.GroupVersionKind(attrs.VersionedKind))
	results, _, err := evaluator.ForInput(ctx, attrs, request,
		celplugin.OptionalVariableBindings{Authorizer: authz}, nil, celconfig.RuntimeCELCostBudgetMatchConditions)
	if err != nil {
		for i := range out.Conditions {
			out.Conditions[i].Result, out.Conditions[i].Error = Error, err.Error()
		}
	}
	for i, r := range results {
		switch {
		case r.Error != nil:
			out.Conditions[i].Result, out.Conditions[i].Error = Error, r.Error.Error()
		case r.EvalResult == celtypes.True:
			out.Conditions[i].Result = True
		case r.EvalResult == celtypes.False:
			out.Conditions[i].Result = False
		default:
			out.Conditions[i].Result, out.Conditions[i].Error = Error, fmt.Sprintf("the expression returned %v, not a bool", r.EvalResult)
		}
	}
	decide(&out, fp, err)
	out.Elapsed = time.Since(start)
	return out
}

// decide follows matcher.Match in
// k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions/matcher.go:
// an evaluator error or any condition error with failurePolicy Fail rejects
// the request, with Ignore skips the webhook; but a false condition skips the
// webhook whatever else failed (conditions are read in order up to the first
// false one).
func decide(out *Outcome, fp *admissionregistrationv1.FailurePolicyType, evalErr error) {
	fail := fp == nil || *fp == admissionregistrationv1.Fail
	if evalErr != nil {
		if fail {
			out.Decision, out.Error = Reject, evalErr.Error()
		} else {
			out.Decision = Skip
		}
		return
	}
	var errs []error
	for _, c := range out.Conditions {
		if c.Result == Error {
			errs = append(errs, errors.New(c.Error))
		}
		if c.Result == False {
			out.Decision, out.FailedCondition = Skip, c.Name
			return
		}
	}
	switch {
	case len(errs) > 0 && fail:
		out.Decision, out.Error = Reject, errors.Join(errs...).Error()
	case len(errs) > 0:
		out.Decision = Skip
	default:
		out.Decision = Call
	}
}

// VersionedAttributes are the admission attributes of req as the dispatcher
// passes them to the matchers and evaluators (versionedAttributes): for a
// caller that matches the request with the upstream matchers itself (the
// replay of recorded writes, internal/replay).
func VersionedAttributes(req Request) *admission.VersionedAttributes { return versionedAttributes(req) }

// versionedAttributes builds the attributes the dispatcher passes to the
// matcher: the objects as given (unstructured, as the API server passes custom
// resources), the kind from the object's apiVersion and kind.
func versionedAttributes(req Request) *admission.VersionedAttributes {
	obj, old := asObject(req.Object), asObject(req.OldObject)
	var gvk schema.GroupVersionKind
	var name string
	for _, o := range []*unstructured.Unstructured{obj, old} {
		if o != nil {
			gvk, name = o.GroupVersionKind(), o.GetName()
			break
		}
	}
	var ro, rold runtime.Object
	if obj != nil {
		ro = obj
	}
	if old != nil {
		rold = old
	}
	ui := &user.DefaultInfo{Name: req.User.Name, UID: req.User.UID, Groups: req.User.Groups, Extra: req.User.Extra}
	attr := admission.NewAttributesRecord(ro, rold, gvk, req.Namespace, name, req.Resource, req.Subresource,
		admission.Operation(req.Operation), nil, req.DryRun, ui)
	return &admission.VersionedAttributes{Attributes: attr, VersionedKind: gvk,
		VersionedObject: admission.NewLazyObject(ro), VersionedOldObject: admission.NewLazyObject(rold)}
}

func asObject(m map[string]any) *unstructured.Unstructured {
	if m == nil {
		return nil
	}
	return &unstructured.Unstructured{Object: m}
}
