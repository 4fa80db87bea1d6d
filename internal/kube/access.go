package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
)

// accessTTL is how long an answer is reused: long enough that a page checking a dozen
// permissions costs no round trips on the next click, short enough that an RBAC change
// shows within half a minute.
const accessTTL = 30 * time.Second

// Access answers "may this identity do that?" with SelfSubjectAccessReviews, so the API
// server's authorizers (RBAC, webhooks) decide. One Access serves one identity; it is
// safe for concurrent use.
type Access struct {
	review func(ctx context.Context, attrs *authorizationv1.ResourceAttributes) (bool, error)
	// reviewURL asks about a non-resource URL (/metrics, /healthz); nil answers "no".
	reviewURL func(ctx context.Context, attrs *authorizationv1.NonResourceAttributes) (bool, error)
	now       func() time.Time
	// observe, if set, is told whether each question was answered from the cache.
	observe func(hit bool)

	mu      sync.Mutex
	answers map[accessKey]accessAnswer
	// asking shares one review among the requests that ask the same question
	// at once: a person opening a dozen tabs, each page asking a dozen
	// questions, would otherwise send the API server twelve times as many
	// reviews through the identity's rate limit, and every page would wait
	// for all of them.
	asking singleflight.Group
}

type accessKey struct{ verb, namespace, group, resource, subresource, name, url string }

type accessAnswer struct {
	allowed bool
	expires time.Time
}

// NewAccess returns an Access for the identity in cfg. It does no network I/O.
func NewAccess(cfg *rest.Config) (*Access, error) {
	cs, err := kubernetes.NewForConfig(clientConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("access client: %w", err)
	}
	return newAccess(cs.AuthorizationV1().SelfSubjectAccessReviews()), nil
}

func newAccess(reviews authorizationclient.SelfSubjectAccessReviewInterface) *Access {
	a := newReviewAccess(func(ctx context.Context, attrs *authorizationv1.ResourceAttributes) (bool, error) {
		return selfReview(ctx, reviews, authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs})
	})
	a.reviewURL = func(ctx context.Context, attrs *authorizationv1.NonResourceAttributes) (bool, error) {
		return selfReview(ctx, reviews, authorizationv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: attrs})
	}
	return a
}

func selfReview(ctx context.Context, reviews authorizationclient.SelfSubjectAccessReviewInterface, spec authorizationv1.SelfSubjectAccessReviewSpec) (bool, error) {
	r, err := reviews.Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return r.Status.Allowed, nil
}

func newReviewAccess(review func(context.Context, *authorizationv1.ResourceAttributes) (bool, error)) *Access {
	return &Access{review: review, now: time.Now, answers: map[accessKey]accessAnswer{}}
}

// accessMaxAnswers bounds one identity's cached answers (names make the key
// space unbounded); past it, the oldest half is dropped.
const accessMaxAnswers = 1024

// Can reports whether the identity may do verb on the cluster-scoped resource of group
// (subresource and name may be empty, meaning any). Answers, allowed or not, are
// cached for about 30 seconds per (verb, group, resource, subresource, name); errors
// are not cached.
func (a *Access) Can(ctx context.Context, verb, group, resource, subresource, name string) (bool, error) {
	return a.cached(ctx, accessKey{verb: verb, group: group, resource: resource, subresource: subresource, name: name}, func() (bool, error) {
		allowed, err := a.review(ctx, &authorizationv1.ResourceAttributes{
			Verb: verb, Group: group, Resource: resource, Subresource: subresource, Name: name,
		})
		if err != nil {
			return false, fmt.Errorf("access review %s %s: %w", verb, groupResource(group, resource, subresource), err)
		}
		return allowed, nil
	})
}

// CanIn reports whether the identity may do verb on the objects of a
// namespaced resource in namespace, cached like Can. A user may hold delete
// in some namespaces only (a RoleBinding), which Can, asking about every
// namespace at once, answers with no.
func (a *Access) CanIn(ctx context.Context, verb, namespace, group, resource string) (bool, error) {
	return a.cached(ctx, accessKey{verb: verb, namespace: namespace, group: group, resource: resource}, func() (bool, error) {
		allowed, err := a.review(ctx, &authorizationv1.ResourceAttributes{
			Verb: verb, Namespace: namespace, Group: group, Resource: resource,
		})
		if err != nil {
			return false, fmt.Errorf("access review %s %s in %s: %w", verb, groupResource(group, resource, ""), namespace, err)
		}
		return allowed, nil
	})
}

// CanURL reports whether the identity may do verb on the non-resource URL
// path (e.g. get /metrics), cached like Can.
func (a *Access) CanURL(ctx context.Context, verb, path string) (bool, error) {
	return a.cached(ctx, accessKey{verb: verb, url: path}, func() (bool, error) {
		if a.reviewURL == nil {
			return false, nil
		}
		allowed, err := a.reviewURL(ctx, &authorizationv1.NonResourceAttributes{Verb: verb, Path: path})
		if err != nil {
			return false, fmt.Errorf("access review %s %s: %w", verb, path, err)
		}
		return allowed, nil
	})
}

func (a *Access) cached(ctx context.Context, key accessKey, ask func() (bool, error)) (bool, error) {
	now := a.now()
	a.mu.Lock()
	ans, ok := a.answers[key]
	a.mu.Unlock()
	hit := ok && now.Before(ans.expires)
	if a.observe != nil {
		a.observe(hit)
	}
	if hit {
		return ans.allowed, nil
	}

	v, err, _ := a.asking.Do(fmt.Sprintf("%q", key), func() (any, error) { return ask() })
	if err != nil {
		return false, err
	}
	allowed := v.(bool)

	a.mu.Lock()
	defer a.mu.Unlock()
	// Names make the key space unbounded, so drop stale answers whenever one is stored.
	for k, v := range a.answers {
		if !now.Before(v.expires) {
			delete(a.answers, k)
		}
	}
	if len(a.answers) >= accessMaxAnswers {
		// Every answer left is fresh; drop those that expire first.
		cut := now.Add(accessTTL / 2)
		for k, v := range a.answers {
			if v.expires.Before(cut) || len(a.answers) >= accessMaxAnswers {
				delete(a.answers, k)
			}
		}
	}
	a.answers[key] = accessAnswer{allowed: allowed, expires: now.Add(accessTTL)}
	return allowed, nil
}

// groupResource formats a resource like kubectl: "csidrivers.storage.k8s.io/status".
func groupResource(group, resource, subresource string) string {
	s := resource
	if group != "" {
		s += "." + group
	}
	if subresource != "" {
		s += "/" + subresource
	}
	return s
}
