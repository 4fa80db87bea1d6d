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

// SignInOIDC starts a session for id (acting with o's ID token) and o. A
// session r already had is forgotten.
func (g *Gate) SignInOIDC(w http.ResponseWriter, r *http.Request, id kube.Identity, o OIDCSession) error {
	if g.Mode != ModeOIDC {
		return fmt.Errorf("OIDC sign-in in %s mode", g.Mode)
	}
	if old, err := g.Sessions.Peek(r); err == nil && old.SID != "" {
		g.Store.Delete(old.SID)
	}
	id.Act, id.Token = kube.ActWithToken, o.IDToken
	sid := g.Store.PutOIDC(id, o, g.Sessions.Expires())
	return g.Sessions.StartWith(w, id.User, sid)
}

// identifyOIDC is IdentifySession in oidc mode: the session's identity,
// its ID token renewed first when it is due. A renewal that fails while the
// token is still valid leaves the session as it is (the next request tries
// again); once the token has expired, the session ends with ErrNotRenewed.
func (g *Gate) identifyOIDC(w http.ResponseWriter, r *http.Request) (kube.Identity, Session, error) {
	sess, err := g.Sessions.Check(w, r)
	if err != nil {
		return kube.Identity{}, Session{}, err
	}
	id, o, ok := g.Store.OIDCOf(sess.SID)
	if sess.SID == "" || !ok {
		return kube.Identity{}, Session{}, ErrExpired
	}
	now := g.OIDC.now()
	if now.Before(o.RenewAt()) {
		return id, sess, nil
	}
	renewed, err := g.renewOIDC(r.Context(), sess.SID, o)
	if err == nil {
		return renewed, sess, nil
	}
	if now.Before(o.Expiry) {
		return id, sess, nil
	}
	g.Store.Delete(sess.SID)
	g.Sessions.End(w)
	return kube.Identity{}, Session{}, fmt.Errorf("%w: %w", ErrNotRenewed, err)
}

// renewOIDC renews session sid's ID token once, however many requests ask
// at the same time, and keeps the result in the Store.
func (g *Gate) renewOIDC(ctx context.Context, sid string, seen OIDCSession) (kube.Identity, error) {
	v, err, _ := g.OIDC.renewals.Do(sid, func() (any, error) {
		// Another request may have renewed it while this one waited.
		id, cur, ok := g.Store.OIDCOf(sid)
		if !ok {
			return nil, ErrExpired
		}
		if cur.IDToken != seen.IDToken {
			return id, nil
		}
		// Not the request's context: a browser that goes away mid-renewal
		// must not leave the provider with a rotated refresh token that the
		// store never got.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), renewTimeout)
		defer cancel()
		next, err := g.OIDC.refresh(rctx, cur)
		if err != nil {
			return nil, err
		}
		id.Token = next.IDToken
		if !g.Store.ReplaceOIDC(sid, id, next) {
			return nil, ErrExpired
		}
		return id, nil
	})
	if err != nil {
		return kube.Identity{}, err
	}
	return v.(kube.Identity), nil
}
