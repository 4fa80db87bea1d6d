// Package signin is the sign-in and sign-out pages of every mode: local
// mode's one-time URL, token mode's form, the OIDC redirect and callback,
// the sign-in page the identity check shows (LoginPage), sign-out, and the
// sign-in limit (a middleware routes.go installs before any body is read).
// Who a request is, sessions and cookies are internal/auth's; the identity
// middleware that asks it stays in handlers (identity.go), which also binds
// CSRF and live streams to the session.
package signin

import (
	"log/slog"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// Deps are the sign-in's ports.
type Deps struct {
	Log *slog.Logger
	// Gate decides who each request is; handlers builds it (local mode over
	// Sessions when main gives none).
	Gate     *auth.Gate
	Sessions *auth.Sessions
	Logins   *auth.LoginTokens // local mode's one-time URLs
	User     string            // who the console acts as in local mode
	// TokenReview learns who a pasted bearer token (or an OIDC ID token) is.
	TokenReview TokenReviewer
	// Users drops an identity's per-user clients at its sign-out; nil keeps
	// them until the cache evicts them.
	Users UserForgetter
	// PreSessionToken issues the CSRF token of token mode's form, bound to a
	// pre-session (handlers/csrf.go).
	PreSessionToken func(c echo.Context) string
	// EndStreams ends a signed-out session's event streams on this replica
	// (handlers/live, signout.go); nil when there are none.
	EndStreams func(sess auth.Session)
	// Limit bounds each client's failed sign-ins; zero fields take
	// DefaultSignInLimit's.
	Limit SignInLimit
}

// Handlers serves the sign-in routes.
type Handlers struct{ d Deps }

// New builds the sign-in's handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// Register adds the public sign-in routes and sign-out. POST /login is token
// mode's form, CSRF-checked like every POST, by a pre-session (login CSRF).
func (h *Handlers) Register(e *echo.Echo) {
	e.GET(urls.Login, h.login)
	e.POST(urls.Login, h.loginWithToken)
	// OIDC sign-in: the start and the provider's callback (oidc.go).
	e.GET(urls.OIDCLogin, h.beginOIDC)
	e.GET(urls.OIDCCallback, h.finishOIDC)
	e.POST(urls.Logout, h.logout)
}
