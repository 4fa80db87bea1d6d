package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// How an Identity reaches the API server.
const (
	// ActAsConsole: the console's own credentials (local mode: the kubeconfig's identity).
	ActAsConsole = ""
	// ActWithToken: the user's own bearer token (token mode).
	ActWithToken = "token"
	// ActImpersonating: the console's credentials, impersonating the user and groups (proxy mode).
	ActImpersonating = "impersonate"
)

// Identity is who a request acts as. Token is a credential: it is never
// printed, logged or used as a map key (String leaves it out).
type Identity struct {
	User   string
	Groups []string
	Act    string // ActAsConsole, ActWithToken or ActImpersonating
	Token  string // the bearer token when Act is ActWithToken
}

// String names the identity for logs: user, groups and how it acts, never the token.
func (id Identity) String() string {
	s := id.User
	if len(id.Groups) > 0 {
		s += " [" + strings.Join(id.Groups, ",") + "]"
	}
	if id.Act != ActAsConsole {
		s += " (" + id.Act + ")"
	}
	return s
}

type identityKey struct{}

// WithIdentity returns ctx carrying id: every client call made with it (through
// Users) acts as id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity ctx carries, if any.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// ErrNoIdentity is returned when a per-user call has no identity in its
// context in a mode where the console must not act for itself.
var ErrNoIdentity = errors.New("no signed-in identity for this request")

// Review asks the API server, with token, who that token authenticates as (a
// SelfSubjectReview). cfg gives the server and its CA; its own credentials are
// not used. An invalid token is an Unauthorized error (apierrors.IsUnauthorized).
func Review(ctx context.Context, cfg *rest.Config, token string) (Identity, error) {
	cs, err := kubernetes.NewForConfig(TokenConfig(cfg, token))
	if err != nil {
		return Identity{}, err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return Identity{}, fmt.Errorf("who is this token: %w", err)
	}
	u := r.Status.UserInfo
	return Identity{User: u.Username, Groups: u.Groups, Act: ActWithToken, Token: token}, nil
}

// TokenConfig returns cfg's server and TLS trust with token as the only
// credential: no client certificate, basic auth, exec plugin or impersonation
// of cfg survives.
func TokenConfig(cfg *rest.Config, token string) *rest.Config {
	c := rest.AnonymousClientConfig(cfg)
	c.BearerToken = token
	return c
}

// ImpersonatingConfig returns cfg (the console's credentials) impersonating
// user and groups on every request.
func ImpersonatingConfig(cfg *rest.Config, user string, groups []string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append([]string(nil), groups...)}
	return c
}
