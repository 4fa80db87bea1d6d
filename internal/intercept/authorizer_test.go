package intercept

import (
	"context"
	"errors"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/celmatch"
)

// reviewerFunc answers SubjectAccessReviews with a function.
type reviewerFunc func(authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error)

func (f reviewerFunc) SubjectAccessReview(_ context.Context, spec authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error) {
	return f(spec)
}

// An `authorizer` check that cannot be asked (no right to ask, or the review
// fails) makes the outcome unknown, with why; one that is answered is not.
// The CEL library reads an unanswered check as "not allowed", so without the
// mark the webhook would look skipped on a guess.
func TestAuthorizerChecksThatCannotBeAskedAreUnknown(t *testing.T) {
	conds := []admissionregistrationv1.MatchCondition{{Name: "may-list-secrets",
		Expression: "authorizer.group('').resource('secrets').namespace(request.namespace).check('list').allowed()"}}
	req := celmatch.Request{Operation: admissionregistrationv1.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Namespace: "team-a", Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}},
		User: celmatch.User{Name: "alice"}}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}, "", errors.New("no"))
	tests := []struct {
		name     string
		reviewer Reviewer
		unknown  string // "" when the answer is known
		decision celmatch.Decision
	}{
		{name: "no reviewer", unknown: "cannot ask access reviews"},
		{name: "forbidden", unknown: "may not create SubjectAccessReviews",
			reviewer: reviewerFunc(func(authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error) {
				return authorizationv1.SubjectAccessReviewStatus{}, forbidden
			})},
		{name: "review fails", unknown: "the access review failed: connection refused",
			reviewer: reviewerFunc(func(authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error) {
				return authorizationv1.SubjectAccessReviewStatus{}, errors.New("connection refused")
			})},
		{name: "allowed", decision: celmatch.Call,
			reviewer: reviewerFunc(func(spec authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error) {
				if spec.User != "alice" || spec.ResourceAttributes == nil || spec.ResourceAttributes.Resource != "secrets" || spec.ResourceAttributes.Namespace != "team-a" {
					t.Errorf("review asked %+v", spec)
				}
				return authorizationv1.SubjectAccessReviewStatus{Allowed: true}, nil
			})},
		{name: "denied", decision: celmatch.Skip,
			reviewer: reviewerFunc(func(authorizationv1.SubjectAccessReviewSpec) (authorizationv1.SubjectAccessReviewStatus, error) {
				return authorizationv1.SubjectAccessReviewStatus{}, nil
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			authz := &reviewAuthorizer{reviewer: tt.reviewer, answers: map[checkKey]answer{}}
			out := celmatch.Evaluate(context.Background(), conds, ptr.To(admissionregistrationv1.Ignore), req, authz)
			unknown, why := authz.unknownSince(0)
			if unknown != (tt.unknown != "") || !strings.Contains(why, tt.unknown) {
				t.Fatalf("unknown=%v (%q), want unknown %q", unknown, why, tt.unknown)
			}
			if tt.unknown == "" && out.Decision != tt.decision {
				t.Errorf("decision %s, want %s", out.Decision, tt.decision)
			}
		})
	}
}
