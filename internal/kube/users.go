package kube

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/lru"
)

// DefaultUserClients bounds how many identities keep their clients at once;
// the least recently used identity's clients are dropped (and rebuilt, with an
// empty access cache, when it comes back).
const DefaultUserClients = 256

// ReviewQPS and ReviewBurst are the client-side rate limit of the proxy
// mode's SubjectAccessReviews, which every signed-in person's access
// questions share (in token mode each person's own client asks, at its own
// limit). At the per-user client's 20 QPS, 17 people opening the queue at once
// (each first page asks a dozen questions) waited 13 s for their turn (issue
// 27). A review is answered by the API server's authorizers alone, without
// storage, and the server's priority and fairness still bounds them.
const (
	ReviewQPS   = 200
	ReviewBurst = 400
)

// UserClients are the clients that act as one identity.
type UserClients struct {
	Access *Access
	Writer *Writer
	Editor *Editor
	Lookup *Lookup
}

// Users hands out, for the identity in a request's context, the clients that
// act as it: the user's own token (token mode), the console's credentials
// impersonating the user (proxy mode), or the console's own clients (local
// mode, or a context without identity when Strict is off). Clients are kept in
// a bounded LRU cache keyed by a hash of the identity, never by the token. It
// is safe for concurrent use.
type Users struct {
	base    *rest.Config
	console *UserClients
	clients *lru.Cache
	// Strict refuses a context without identity (ErrNoIdentity) instead of
	// acting as the console: set in token and proxy modes.
	Strict        bool
	observeAccess func(hit bool)
	// reviews makes SubjectAccessReviews with the console's credentials (proxy mode).
	reviews authorizationclient.SubjectAccessReviewInterface
}

// NewUsers returns a factory of per-identity clients over cfg (the console's
// own identity). size bounds the identities cached (DefaultUserClients if 0).
// It does no network I/O.
func NewUsers(cfg *rest.Config, size int) (*Users, error) {
	if size <= 0 {
		size = DefaultUserClients
	}
	u := &Users{base: cfg, clients: lru.New(size)}
	var err error
	if u.console, err = newUserClients(cfg); err != nil {
		return nil, err
	}
	rc := clientConfig(cfg)
	rc.QPS, rc.Burst = ReviewQPS, ReviewBurst
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("access review client: %w", err)
	}
	u.reviews = cs.AuthorizationV1().SubjectAccessReviews()
	return u, nil
}

// ObserveAccess sets f to be told, for every access question of every
// identity, whether it was answered from the cache (the access-review cache
// metric). Call it before the first request.
func (u *Users) ObserveAccess(f func(hit bool)) {
	u.observeAccess = f
	u.console.Access.observe = f
}

// Console returns the clients that act as the console's own identity.
func (u *Users) Console() *UserClients { return u.console }

func newUserClients(cfg *rest.Config) (*UserClients, error) {
	var (
		c   UserClients
		err error
	)
	if c.Access, err = NewAccess(cfg); err != nil {
		return nil, err
	}
	if c.Writer, err = NewWriter(cfg); err != nil {
		return nil, err
	}
	if c.Editor, err = NewEditor(cfg); err != nil {
		return nil, err
	}
	if c.Lookup, err = NewLookup(cfg); err != nil {
		return nil, err
	}
	return &c, nil
}

// For returns the clients acting as the identity in ctx.
func (u *Users) For(ctx context.Context) (*UserClients, error) {
	id, ok := IdentityFrom(ctx)
	if !ok || id.Act == ActAsConsole {
		if u.Strict {
			return nil, ErrNoIdentity
		}
		return u.console, nil
	}
	key := cacheKey(id)
	if c, ok := u.clients.Get(key); ok {
		return c.(*UserClients), nil
	}
	c, err := u.build(id)
	if err != nil {
		return nil, err
	}
	u.clients.Add(key, c)
	return c, nil
}

func (u *Users) build(id Identity) (*UserClients, error) {
	switch id.Act {
	case ActWithToken:
		if id.Token == "" {
			return nil, ErrNoIdentity
		}
		c, err := newUserClients(TokenConfig(u.base, id.Token))
		if err != nil {
			return nil, err
		}
		c.Access.observe = u.observeAccess
		return c, nil
	case ActImpersonating:
		if id.User == "" {
			return nil, ErrNoIdentity
		}
		c, err := newUserClients(ImpersonatingConfig(u.base, id.User, id.Groups))
		if err != nil {
			return nil, err
		}
		// The API server answers for the user: a SubjectAccessReview made
		// with the console's credentials, which need no right to impersonate
		// for it.
		c.Access = newReviewAccess(subjectReview(u.reviews, id.User, id.Groups))
		c.Access.reviewURL = subjectReviewURL(u.reviews, id.User, id.Groups)
		c.Access.observe = u.observeAccess
		return c, nil
	}
	return nil, fmt.Errorf("identity %s: unknown way to act %q", id, id.Act)
}

// cacheKey identifies an identity's clients: a SHA-256 over how it acts, the
// user, the groups and the token, so the token itself is never a key.
func cacheKey(id Identity) string {
	h := sha256.New()
	for _, s := range append([]string{id.Act, id.User, id.Token}, id.Groups...) {
		fmt.Fprintf(h, "%d:%s;", len(s), s)
	}
	return string(h.Sum(nil))
}

// subjectReview answers access questions for user and groups with
// SubjectAccessReviews.
func subjectReview(reviews authorizationclient.SubjectAccessReviewInterface, user string, groups []string) func(context.Context, *authorizationv1.ResourceAttributes) (bool, error) {
	return func(ctx context.Context, attrs *authorizationv1.ResourceAttributes) (bool, error) {
		r, err := reviews.Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: attrs},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return r.Status.Allowed, nil
	}
}

// subjectReviewURL answers non-resource URL questions for user and groups.
func subjectReviewURL(reviews authorizationclient.SubjectAccessReviewInterface, user string, groups []string) func(context.Context, *authorizationv1.NonResourceAttributes) (bool, error) {
	return func(ctx context.Context, attrs *authorizationv1.NonResourceAttributes) (bool, error) {
		r, err := reviews.Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, NonResourceAttributes: attrs},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return r.Status.Allowed, nil
	}
}

// CanURL answers whether the identity in the context may do verb on the
// non-resource URL path, like Can.
func (a UserAccess) CanURL(ctx context.Context, verb, path string) (bool, error) {
	c, err := a.Users.For(ctx)
	if errors.Is(err, ErrNoIdentity) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ok, err := c.Access.CanURL(ctx, verb, path)
	if apierrors.IsUnauthorized(err) {
		return false, nil
	}
	return ok, err
}

// UserAccess answers access questions as the identity in the context. A
// context without identity in strict mode may do nothing.
type UserAccess struct{ Users *Users }

// Can is Access.Can for the identity in ctx. A token the API server no longer
// accepts may do nothing: Unauthorized is "no", not an error that would let a
// page fall back to the shared cache.
func (a UserAccess) Can(ctx context.Context, verb, group, resource, subresource, name string) (bool, error) {
	c, err := a.Users.For(ctx)
	if errors.Is(err, ErrNoIdentity) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ok, err := c.Access.Can(ctx, verb, group, resource, subresource, name)
	if apierrors.IsUnauthorized(err) {
		return false, nil
	}
	return ok, err
}

// CanIn is Access.CanIn for the signed-in user.
func (a UserAccess) CanIn(ctx context.Context, verb, namespace, group, resource string) (bool, error) {
	c, err := a.Users.For(ctx)
	if errors.Is(err, ErrNoIdentity) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ok, err := c.Access.CanIn(ctx, verb, namespace, group, resource)
	if apierrors.IsUnauthorized(err) {
		return false, nil
	}
	return ok, err
}

// Forget drops the clients kept for id (its sign-out): a token-mode client
// holds the user's bearer token, which must not outlive the session in memory.
// Another session of the same identity builds them again on its next request.
func (u *Users) Forget(id Identity) {
	if id.Act == ActAsConsole || (id.User == "" && id.Token == "") {
		return
	}
	u.clients.Remove(cacheKey(id))
}

// Kept is how many identities' clients are kept (tests of sign-out, metrics).
func (u *Users) Kept() int { return u.clients.Len() }
