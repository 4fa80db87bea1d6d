package intercept

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/celmatch"
)

// DefaultCELBudget bounds the time the matchConditions of one question may
// take, over all webhooks, authorization checks included. Each webhook is
// also bounded by the API server's CEL cost budget.
const DefaultCELBudget = 2 * time.Second

// Objects is what the matchConditions see beyond the request's attributes:
// the object and old object as the user gave them (nil: none) and who makes
// the request.
type Objects struct {
	Object, OldObject map[string]any
	User              celmatch.User
	DryRun            bool
}

// Conditions is the evaluation of one webhook's matchConditions.
type Conditions struct {
	celmatch.Outcome
	// Unknown: an `authorizer` check could not be asked, so the outcome
	// stands on a check answered "no opinion" and may be wrong.
	Unknown bool
	// UnknownWhy says why a check could not be asked.
	UnknownWhy string
	// NotEvaluated says why the conditions were not evaluated (the time
	// budget was spent); "" when they were.
	NotEvaluated string
}

// evaluateConditions evaluates the matchConditions of every webhook the
// rules and selectors let through, in the order the API server considers
// them, within the time budget. It returns one entry per verdict, nil where
// there is nothing to evaluate.
func (a Asker) evaluateConditions(ctx context.Context, configs []admission.Config, verdicts []admission.Verdict, req admission.Request, objs Objects) []*Conditions {
	budget := a.CELBudget
	if budget <= 0 {
		budget = DefaultCELBudget
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	hooks := map[[3]string]admission.Hook{}
	for _, c := range configs {
		for _, h := range c.Hooks {
			hooks[[3]string{string(c.Kind), c.Name, h.Name}] = h
		}
	}
	in := celmatch.Request{Operation: req.Operation, Subresource: req.Subresource, Namespace: req.Namespace,
		Object: objs.Object, OldObject: objs.OldObject, User: objs.User, DryRun: objs.DryRun}
	authz := &reviewAuthorizer{reviewer: a.Reviewer, answers: map[checkKey]answer{}}
	out := make([]*Conditions, len(verdicts))
	for i, v := range verdicts {
		h, ok := hooks[[3]string{string(v.Kind), v.Config, v.Webhook}]
		if !v.Called || !ok || len(h.MatchConditions) == 0 {
			continue
		}
		if ctx.Err() != nil {
			out[i] = &Conditions{NotEvaluated: "Not evaluated: the time budget of " + budget.String() + " for this question was spent."}
			continue
		}
		// The webhook sees the request as the resource its rule matched
		// (an equivalent one under matchPolicy Equivalent).
		gvr := req.Resource
		if v.Via != nil {
			gvr = *v.Via
		}
		in.Resource = schema.GroupVersionResource{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource}
		before := authz.unknownAnswers()
		fp := h.FailurePolicy
		res := &Conditions{Outcome: celmatch.Evaluate(ctx, h.MatchConditions, &fp, in, authz)}
		res.Unknown, res.UnknownWhy = authz.unknownSince(before)
		out[i] = res
	}
	return out
}

// unknownAnswers counts the checks answered unknown so far, repeats too.
func (r *reviewAuthorizer) unknownAnswers() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unknown
}

// unknownSince reports whether a check was answered unknown after before
// (unknownAnswers' count), and why.
func (r *reviewAuthorizer) unknownSince(before int) (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unknown > before {
		return true, r.why
	}
	return false, ""
}
