package handlers

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	liveupdates "github.com/clusterdesk/clusterdesk/handlers/live"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// gate returns the sign-in gate; without one in Deps it is local mode over
// Deps.Sessions.
func gateFor(deps Deps) *auth.Gate {
	if deps.Gate != nil {
		return deps.Gate
	}
	return &auth.Gate{Mode: auth.ModeLocal, Sessions: deps.Sessions, LocalUser: deps.User}
}

// requireIdentity lets a request through only when the gate knows who it is,
// and puts that identity in the request's context, where the per-user clients
// (kube.Users) find it. A browser without one gets the login page (401), htmx
// gets a full-page redirect, an event stream is told its session ended. A
// proxy that names a system: user or group gets a 403 naming it, logged.
// Public or not is the route echo matched (publicRoute, route_path.go); a
// path spelled so that it could be read two ways is refused first.
func requireIdentity(g *auth.Gate, loginPage func(c echo.Context, status int, msg string) error, log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if ambiguousPath(c.Request()) {
				return ambiguousPathRefused
			}
			if publicRoute(c.Path()) {
				return next(c)
			}
			identify := g.IdentifySession
			if c.Path() == urls.Events {
				// An open tab is not activity; what else the gate writes
				// (an OIDC renewal's cookie) reaches the browser.
				identify = g.IdentifyStream
			}
			id, sess, err := identify(c.Response(), c.Request())
			var reserved *auth.ReservedNameError
			if errors.As(err, &reserved) {
				log.Warn("proxy identity refused", "reason", "reserved system: name", "kind", reserved.Kind,
					"name", reserved.Name, "header", reserved.Header, "value", reserved.Value, "path", c.Request().URL.Path)
				return echo.NewHTTPError(http.StatusForbidden, reservedNameMessage(reserved))
			}
			if err != nil {
				if liveupdates.WantsEventStream(c.Request()) {
					return liveupdates.SessionEnded(c, err, g.Mode)
				}
				if isHTMX(c) {
					c.Response().Header().Set("HX-Redirect", urls.Login)
				}
				msg := ""
				switch {
				case errors.Is(err, auth.ErrExpired):
					msg = "Your session has expired."
				case errors.Is(err, auth.ErrSignedOut):
					msg = "This session was signed out."
				case errors.Is(err, auth.ErrNotRenewed):
					msg = "Your sign-in expired and the provider did not renew it."
				case errors.Is(err, auth.ErrNotReady):
					msg = "clusterdesk cannot confirm right now which sessions were signed out (it has just started, or lost its watch of the cluster). Try again in a moment."
				case errors.Is(err, auth.ErrTokenRejected):
					msg = "The API server no longer accepts your token, so clusterdesk signed you out."
				case errors.Is(err, auth.ErrUntrusted), errors.Is(err, auth.ErrNoProxyUser):
					msg = "This request did not come through clusterdesk's sign-in proxy."
				}
				return loginPage(c, http.StatusUnauthorized, msg)
			}
			c.Set(sessionContextKey, id.User)
			if g.Mode == auth.ModeProxy {
				c.Set(csrfBindingKey, auth.ProxyBinding(id))
			} else {
				c.Set(csrfBindingKey, auth.SessionBinding(sess))
			}
			c.SetRequest(c.Request().WithContext(kube.WithIdentity(c.Request().Context(), id)))
			return next(c)
		}
	}
}

// reservedNameMessage says which name the proxy sent, why it is refused, and
// what fixes it.
func reservedNameMessage(e *auth.ReservedNameError) string {
	flag := "--proxy-groups-prefix"
	if e.Kind == "user" {
		flag = "--proxy-user-prefix"
	}
	return fmt.Sprintf("clusterdesk refuses this sign-in: the proxy named the %s %q (%s: %q). "+
		"Names that start with %q belong to Kubernetes itself (system:masters is cluster-admin), so a %s from the sign-in proxy may not have one. "+
		"Ask your administrator to rename it in the identity provider, or to set %s (e.g. oidc:) as the API server prefixes the same names.",
		e.Kind, e.Name, e.Header, e.Value, auth.ReservedPrefix, e.Kind, flag)
}
