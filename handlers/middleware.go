package handlers

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/static"
)

const sessionContextKey = page.UserKey

// contentSecurityPolicy allows nothing inline and nothing from elsewhere: every
// script and style is a file served by this binary.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// securityHeaders sets CSP and the usual hardening headers on every response.
func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
		if !strings.HasPrefix(c.Path(), static.Prefix) { // the route, as in publicRoute (route_path.go)
			h.Set("Cache-Control", "no-store")
		}
		return next(c)
	}
}

// refuseInReadOnly is put on every mutating route: in --read-only mode the
// server refuses the write whatever the page showed.
func refuseInReadOnly(readOnly bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if readOnly {
				return echo.NewHTTPError(http.StatusForbidden, "clusterdesk runs in read-only mode: no changes can be made through it.")
			}
			return next(c)
		}
	}
}

// requestLog logs one line per request: method, path (never the query, which
// may hold a login token), status and duration.
func requestLog(log *slog.Logger) echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogMethod: true, LogURIPath: true, LogStatus: true, LogLatency: true, HandleError: true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			log.Info("http", "method", v.Method, "path", v.URIPath, "status", v.Status, "ms", float64(v.Latency.Microseconds())/1000)
			return nil
		},
	})
}
