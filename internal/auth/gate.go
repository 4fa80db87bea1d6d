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
	Sessions  *Sessions // local, token and oidc modes
	Proxy     *Proxy    // proxy mode
	OIDC      *OIDC     // oidc mode (with Sessions): the relying party
	LocalUser string    // local mode: the kubeconfig's identity, for display

	// Recheck (token mode), if set, asks the API server again whether a
	// session's token is still valid, at most once per RecheckEvery on each
	// replica: a revoked or expired token ends the session
	// (ErrTokenRejected) instead of leaving the user with pages that all say
	// "forbidden".
	Recheck      func(ctx context.Context, token string) error
	RecheckEvery time.Duration

	rechecks rechecks
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
		if g.Sessions == nil {
			return errors.New("token mode needs sessions")
		}
	case ModeProxy:
		if g.Proxy == nil {
			return ErrNoTrust
		}
		return g.Proxy.Check()
	case ModeOIDC:
		if g.Sessions == nil || g.OIDC == nil {
			return errors.New("oidc mode needs sessions and the issuer's settings")
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
	return g.identify(w, r, true)
}

// IdentifyStream is IdentifySession for an event stream: the session's idle
// clock is left as the request found it (Sessions.CheckQuiet). What else the
// gate writes on w it must still send: in oidc mode a renewal's cookie, which
// holds the rotated refresh token (the provider has spent the old one), and
// in token mode the cleared cookie of a rejected token.
func (g *Gate) IdentifyStream(w http.ResponseWriter, r *http.Request) (kube.Identity, Session, error) {
	return g.identify(w, r, false)
}

func (g *Gate) identify(w http.ResponseWriter, r *http.Request, refresh bool) (kube.Identity, Session, error) {
	if g.Mode == ModeProxy {
		id, err := g.Proxy.Identify(r)
		return id, Session{}, err
	}
	if g.Mode == ModeOIDC {
		return g.identifyOIDC(w, r, refresh) // oidc_gate.go
	}
	sess, err := g.Sessions.check(w, r, refresh)
	if err != nil {
		return kube.Identity{}, Session{}, err
	}
	if g.Mode != ModeToken {
		return kube.Identity{User: sess.User, Act: kube.ActAsConsole}, sess, nil
	}
	if sess.Creds.Token == "" {
		// A session without a token acts as no one (a cookie of another mode).
		return kube.Identity{}, Session{}, ErrExpired
	}
	if g.rechecks.rejected(sess.ID) {
		// This replica saw the API server refuse the token; a copy of the
		// cookie costs no second review.
		return kube.Identity{}, Session{}, ErrExpired
	}
	id := kube.Identity{User: sess.User, Groups: sess.Groups, Act: kube.ActWithToken, Token: sess.Creds.Token}
	if g.Recheck != nil && g.rechecks.due(sess, g.Sessions.now(), g.RecheckEvery) {
		// Only a clear "unauthorized" ends the session: an API server that
		// cannot be reached says nothing about the token.
		if err := g.Recheck(r.Context(), id.Token); apierrors.IsUnauthorized(err) {
			g.rechecks.reject(sess.ID)
			g.Sessions.EndRequest(w, r)
			return kube.Identity{}, Session{}, ErrTokenRejected
		}
	}
	return id, sess, nil
}

// SignIn starts a token-mode session for id: its token, user and groups go
// sealed into the cookie (the browser cannot read them; every replica
// sharing the keys can). A session r already had is revoked, so a copy of
// its cookie stops working as the Store's forgetting did.
func (g *Gate) SignIn(w http.ResponseWriter, r *http.Request, id kube.Identity) error {
	if g.Mode != ModeToken {
		return fmt.Errorf("sign-in with a token in %s mode", g.Mode)
	}
	if err := g.revokeReplaced(r); err != nil {
		return err
	}
	_, err := g.Sessions.StartWith(w, r, Session{User: id.User, Groups: id.Groups, Creds: Credentials{Token: id.Token}})
	return err
}

// revokeReplaced revokes the session r already had, if any, before a
// sign-in replaces it.
func (g *Gate) revokeReplaced(r *http.Request) error {
	if old, err := g.Sessions.Peek(r); err == nil && g.Sessions.Revocations != nil && !g.Sessions.Revocations.Revoked(old) {
		if err := g.Sessions.Revocations.Revoke(old, g.Sessions.Until(old)); err != nil {
			return fmt.Errorf("revoke the replaced session: %w", err)
		}
	}
	return nil
}

// SignOut ends r's session everywhere: its id is revoked (so a copy of the
// cookie, token and all, no longer works on any replica) and the cookie
// cleared. It returns the session it ended (zero if r had none), whose
// other resources (event streams, per-user clients) the caller ends too. An
// error means the revocation may not hold; the rest is done regardless.
func (g *Gate) SignOut(w http.ResponseWriter, r *http.Request) (Session, error) {
	if g.Sessions == nil {
		return Session{}, nil
	}
	defer g.Sessions.EndRequest(w, r)
	sess, err := g.Sessions.Peek(r)
	if err != nil {
		return Session{}, nil
	}
	if g.Sessions.Revocations != nil {
		if err := g.Sessions.Revocations.Revoke(sess, g.Sessions.Until(sess)); err != nil {
			return sess, fmt.Errorf("revoke session: %w", err)
		}
	}
	return sess, nil
}
