package auth

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// renewTimeout bounds one renewal at the provider.
const renewTimeout = 15 * time.Second

// BeginOIDC starts a sign-in: it seals a new flight (state, nonce, PKCE
// verifier) into a cookie on w and returns the provider's authorize URL to
// send the browser to.
func (g *Gate) BeginOIDC(ctx context.Context, w http.ResponseWriter) (string, error) {
	if g.Mode != ModeOIDC {
		return "", fmt.Errorf("OIDC sign-in in %s mode", g.Mode)
	}
	// Discovery first: if the issuer is down, no flight cookie is left behind.
	if _, _, err := g.OIDC.discover(ctx); err != nil {
		return "", err
	}
	f, err := g.Sessions.newOIDCFlight(w)
	if err != nil {
		return "", err
	}
	return g.OIDC.authCodeURL(ctx, f)
}

// FinishOIDC checks the provider's callback r against this browser's flight
// (which it spends) and returns the verified sign-in. Errors are *OIDCError.
func (g *Gate) FinishOIDC(w http.ResponseWriter, r *http.Request) (OIDCSession, error) {
	if g.Mode != ModeOIDC {
		return OIDCSession{}, fmt.Errorf("OIDC sign-in in %s mode", g.Mode)
	}
	f, ok := g.Sessions.takeOIDCFlight(w, r)
	return g.OIDC.finish(r.Context(), r.URL.Query(), f, ok)
}

// SignInOIDC starts a session for id (acting with o's ID token): the API
// server's name and groups for the person, and o's tokens and expiry, go
// sealed into the cookie. A session r already had is revoked, as in SignIn.
func (g *Gate) SignInOIDC(w http.ResponseWriter, r *http.Request, id kube.Identity, o OIDCSession) error {
	if g.Mode != ModeOIDC {
		return fmt.Errorf("OIDC sign-in in %s mode", g.Mode)
	}
	if err := g.revokeReplaced(r); err != nil {
		return err
	}
	_, err := g.Sessions.StartWith(w, r, Session{User: id.User, Groups: id.Groups, Creds: o.credentials()})
	return err
}

// identifyOIDC is IdentifySession in oidc mode: the session's identity,
// its ID token renewed first when it is due (the renewed tokens are sealed
// into a new cookie on w). A renewal that fails while the token is still
// valid leaves the session as it is (the next request tries again); once the
// token has expired, the session ends with ErrNotRenewed. Without refresh
// (an event stream) the renewed cookie keeps the idle clock the request had.
func (g *Gate) identifyOIDC(w http.ResponseWriter, r *http.Request, refresh bool) (kube.Identity, Session, error) {
	sess, err := g.Sessions.check(w, r, refresh)
	if err != nil {
		return kube.Identity{}, Session{}, err
	}
	o, ok := oidcOf(sess.Creds)
	if !ok {
		// A session without an ID token acts as no one (a cookie of another mode).
		return kube.Identity{}, Session{}, ErrExpired
	}
	id := kube.Identity{User: sess.User, Groups: sess.Groups, Act: kube.ActWithToken, Token: o.IDToken}
	now := g.OIDC.now()
	if now.Before(o.RenewAt()) {
		return id, sess, nil
	}
	next, err := g.renewOIDC(r.Context(), sess.ID, o)
	if err == nil {
		sess.Creds = next.credentials()
		if err := g.Sessions.write(w, r, sess); err != nil {
			return kube.Identity{}, Session{}, err
		}
		id.Token = next.IDToken
		return id, sess, nil
	}
	if now.Before(o.Expiry) {
		return id, sess, nil
	}
	g.Sessions.EndRequest(w, r)
	return kube.Identity{}, Session{}, fmt.Errorf("%w: %w", ErrNotRenewed, err)
}

// renewOIDC renews session sessionID's ID token seen once on this replica,
// however many requests ask at the same time or bring the replaced token
// later (recentRenewals).
func (g *Gate) renewOIDC(ctx context.Context, sessionID string, seen OIDCSession) (OIDCSession, error) {
	v, err, _ := g.OIDC.renewals.Do(sessionID, func() (any, error) {
		// Another request may have renewed it while this one waited.
		if next, ok := g.OIDC.renewed.get(sessionID, seen.IDToken, g.OIDC.now()); ok {
			return next, nil
		}
		// Not the request's context: a browser that goes away mid-renewal
		// must not leave the provider with a rotated refresh token that no
		// cookie got (the others waiting on this renewal still write it).
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), renewTimeout)
		defer cancel()
		next, err := g.OIDC.refresh(rctx, seen)
		if err != nil {
			return nil, err
		}
		g.OIDC.renewed.put(sessionID, seen.IDToken, next, g.OIDC.now())
		return next, nil
	})
	if err != nil {
		return OIDCSession{}, err
	}
	return v.(OIDCSession), nil
}
