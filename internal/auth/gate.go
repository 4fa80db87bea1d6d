package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Mode is how people sign in.
type Mode string

// The sign-in modes.
const (
	// ModeLocal: a one-time login URL printed at start; everyone acts as the kubeconfig's identity.
	ModeLocal Mode = "local"
	// ModeToken: the user pastes a Kubernetes bearer token, which the console then acts with.
	ModeToken Mode = "token"
	// ModeProxy: an authenticating reverse proxy names the user, whom the console impersonates.
	ModeProxy Mode = "proxy"
)

// ParseMode reads a --auth value.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeLocal, ModeToken, ModeProxy, ModeOIDC:
		return m, nil
	}
	return "", fmt.Errorf("unknown sign-in mode %q (want local, token, proxy or oidc)", s)
}

// Gate decides who a request is, in one of the modes.
type Gate struct {
	Mode      Mode
	Sessions  *Sessions // local and token modes
	Store     *Store    // token mode: the signed-in users' tokens
	Proxy     *Proxy    // proxy mode
	OIDC      *OIDC     // oidc mode (with Sessions and Store): the relying party
	LocalUser string    // local mode: the kubeconfig's identity, for display

	// Recheck (token mode), if set, asks the API server again whether a
	// session's token is still valid, at most once per RecheckEvery: a
	// revoked or expired token ends the session (ErrTokenRejected) instead of
	// leaving the user with pages that all say "forbidden".
	Recheck      func(ctx context.Context, token string) error
	RecheckEvery time.Duration
}

// ErrTokenRejected: the API server no longer accepts the session's token.
var ErrTokenRejected = errors.New("the API server no longer accepts this token")

// Check reports a gate that cannot work, e.g. proxy mode without a trust setting.
func (g *Gate) Check() error {
	switch g.Mode {
	case ModeLocal:
		if g.Sessions == nil {
			return errors.New("local mode needs sessions")
		}
	case ModeToken:
		if g.Sessions == nil || g.Store == nil {
			return errors.New("token mode needs sessions and a token store")
		}
	case ModeProxy:
		if g.Proxy == nil {
			return ErrNoTrust
		}
		return g.Proxy.Check()
	case ModeOIDC:
		if g.Sessions == nil || g.Store == nil || g.OIDC == nil {
			return errors.New("oidc mode needs sessions, a session store and the issuer's settings")
		}
	default:
		return fmt.Errorf("unknown sign-in mode %q", g.Mode)
	}
	return nil
}

// Identify returns who r is, refreshing its session's idle clock on w. Errors
// are ErrNoSession, ErrExpired, ErrSignedOut (local, token) or ErrUntrusted,
// ErrNoProxyUser (proxy).
func (g *Gate) Identify(w http.ResponseWriter, r *http.Request) (kube.Identity, error) {
	id, _, err := g.IdentifySession(w, r)
	return id, err
}

// IdentifySession is Identify that also returns the session (zero in proxy
// mode, which has none), whose id binds CSRF tokens and names event streams.
func (g *Gate) IdentifySession(w http.ResponseWriter, r *http.Request) (kube.Identity, Session, error) {
	if g.Mode == ModeProxy {
		id, err := g.Proxy.Identify(r)
		return id, Session{}, err
	}
	if g.Mode == ModeOIDC {
		return g.identifyOIDC(w, r) // oidc_gate.go
	}
	sess, err := g.Sessions.Check(w, r)
	if err != nil {
		return kube.Identity{}, Session{}, err
	}
	if g.Mode != ModeToken {
		return kube.Identity{User: sess.User, Act: kube.ActAsConsole}, sess, nil
	}
	id, ok := g.Store.Get(sess.SID)
	if sess.SID == "" || !ok {
		// Signed out elsewhere, idle, or the console restarted.
		return kube.Identity{}, Session{}, ErrExpired
	}
	if g.Recheck != nil && g.Store.Due(sess.SID, g.RecheckEvery) {
		// Only a clear "unauthorized" ends the session: an API server that
		// cannot be reached says nothing about the token.
		if err := g.Recheck(r.Context(), id.Token); apierrors.IsUnauthorized(err) {
			g.Store.Delete(sess.SID)
			g.Sessions.End(w)
			return kube.Identity{}, Session{}, ErrTokenRejected
		}
	}
	return id, sess, nil
}

// SignIn starts a token-mode session for id (which holds the token): the token
// stays in the Store, the cookie names it by a new random id. A session r
// already had is forgotten.
func (g *Gate) SignIn(w http.ResponseWriter, r *http.Request, id kube.Identity) error {
	if g.Mode != ModeToken {
		return fmt.Errorf("sign-in with a token in %s mode", g.Mode)
	}
	if old, err := g.Sessions.Peek(r); err == nil && old.SID != "" {
		g.Store.Delete(old.SID)
	}
	sid := g.Store.Put(id, g.Sessions.Expires())
	return g.Sessions.StartWith(w, id.User, sid)
}

// SignOut ends r's session everywhere: its id is revoked (so a copy of the
// cookie no longer works), the cookie cleared and, in token mode, the token
// forgotten. It returns the session it ended (zero if r had none), whose
// other resources (event streams, per-user clients) the caller ends too. An
// error means the revocation may not hold; the rest is done regardless.
func (g *Gate) SignOut(w http.ResponseWriter, r *http.Request) (Session, error) {
	if g.Sessions == nil {
		return Session{}, nil
	}
	defer g.Sessions.End(w)
	sess, err := g.Sessions.Peek(r)
	if err != nil {
		return Session{}, nil
	}
	if sess.SID != "" && g.Store != nil {
		g.Store.Delete(sess.SID)
	}
	if g.Sessions.Revocations != nil {
		if err := g.Sessions.Revocations.Revoke(sess.ID, g.Sessions.Until(sess)); err != nil {
			return sess, fmt.Errorf("revoke session: %w", err)
		}
	}
	return sess, nil
}
