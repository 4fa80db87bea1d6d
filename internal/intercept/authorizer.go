package intercept

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Reviewer asks the API server SubjectAccessReviews, as the signed-in user.
type Reviewer interface {
	SubjectAccessReview(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error)
}

// errUnknown is what an `authorizer` check returns when it cannot be asked
// (the signed-in user may not create SubjectAccessReviews, or the review
// failed): the expression sees no decision and an error, and the answer is
// marked unknown rather than guessed. The CEL library's allowed() is false
// for such a check, so without the mark a webhook would look skipped or a
// validation failed on a guess.
var errUnknown = errors.New("unknown")

// unknownBecause wraps errUnknown with why the check could not be asked.
func unknownBecause(why string) error { return fmt.Errorf("%w: %s", errUnknown, why) }

// whyForbidden is the reason when the signed-in user may not ask.
const whyForbidden = "your Kubernetes identity may not create SubjectAccessReviews, so clusterdesk cannot ask the API server"

// reviewAuthorizer answers CEL `authorizer` checks with SubjectAccessReviews
// about the simulated user, as the API server's authorizer answers them about
// the requesting user. Answers are kept for one question, so the same check in
// several webhooks costs one review.
type reviewAuthorizer struct {
	reviewer Reviewer
	mu       sync.Mutex
	answers  map[checkKey]answer
	unknown  int    // checks answered unknown (could not be asked), repeats included
	why      string // why the last unknown check could not be asked
}

// checkKey is one check; the user is the same for every check of a question.
type checkKey struct {
	resource                                       bool
	verb, group, version, res, sub, ns, name, path string
}

type answer struct {
	decision authorizer.Decision
	reason   string
	err      error
}

// Authorize implements authorizer.UnconditionalAuthorizer.
func (r *reviewAuthorizer) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	spec := specFor(a)
	key := checkKey{resource: a.IsResourceRequest(), verb: a.GetVerb(), group: a.GetAPIGroup(), version: a.GetAPIVersion(),
		res: a.GetResource(), sub: a.GetSubresource(), ns: a.GetNamespace(), name: a.GetName(), path: a.GetPath()}
	r.mu.Lock()
	ans, ok := r.answers[key]
	r.mu.Unlock()
	if !ok {
		ans = r.ask(ctx, spec)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[key] = ans
	if errors.Is(ans.err, errUnknown) {
		r.unknown++
		r.why = strings.TrimPrefix(ans.err.Error(), errUnknown.Error()+": ")
	}
	return ans.decision, ans.reason, ans.err
}

func (r *reviewAuthorizer) ask(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) answer {
	if r.reviewer == nil {
		return answer{decision: authorizer.DecisionNoOpinion, err: unknownBecause("clusterdesk cannot ask access reviews here")}
	}
	st, err := r.reviewer.SubjectAccessReview(ctx, spec)
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return answer{decision: authorizer.DecisionNoOpinion, err: unknownBecause(whyForbidden)}
	case err != nil:
		// A failed review (timeout, the API server unreachable) answers
		// nothing about the user: unknown, never a guessed denial.
		return answer{decision: authorizer.DecisionNoOpinion, err: unknownBecause("the access review failed: " + err.Error())}
	case st.Allowed:
		return answer{decision: authorizer.DecisionAllow, reason: st.Reason}
	case st.Denied:
		return answer{decision: authorizer.DecisionDeny, reason: st.Reason}
	}
	var evalErr error
	if st.EvaluationError != "" {
		evalErr = errors.New(st.EvaluationError)
	}
	return answer{decision: authorizer.DecisionNoOpinion, reason: st.Reason, err: evalErr}
}

// specFor turns the CEL library's attributes into a SubjectAccessReview.
func specFor(a authorizer.Attributes) authorizationv1.SubjectAccessReviewSpec {
	spec := authorizationv1.SubjectAccessReviewSpec{}
	if u := a.GetUser(); u != nil {
		spec.User, spec.UID, spec.Groups = u.GetName(), u.GetUID(), u.GetGroups()
		if extra := u.GetExtra(); len(extra) > 0 {
			spec.Extra = map[string]authorizationv1.ExtraValue{}
			for k, v := range extra {
				spec.Extra[k] = v
			}
		}
	}
	if !a.IsResourceRequest() {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: a.GetPath(), Verb: a.GetVerb()}
		return spec
	}
	spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Namespace: a.GetNamespace(), Verb: a.GetVerb(),
		Group: a.GetAPIGroup(), Version: a.GetAPIVersion(), Resource: a.GetResource(), Subresource: a.GetSubresource(), Name: a.GetName()}
	return spec
}
