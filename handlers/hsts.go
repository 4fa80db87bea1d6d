package handlers

import (
	"strings"

	"github.com/labstack/echo/v4"
)

// hstsValue is the Strict-Transport-Security of every answer sent over TLS:
// one year, as the usual preload lists ask. No includeSubDomains: the console
// is one service among others under its domain, and must not decide for them.
const hstsValue = "max-age=31536000"

// strictTransport tells browsers to come back over HTTPS only, on answers
// served over TLS or, behind a TLS-terminating proxy, when the public URL
// (publicOrigin, --public-url) is https. Whether the connection is TLS is
// what the request says (net/http sets Request.TLS when the listener is
// tls.NewListener's), never a header a client could send
// (X-Forwarded-Proto). Without either, the header is left out: over plain
// HTTP browsers ignore it, and it would only mislead.
func strictTransport(publicOrigin string) echo.MiddlewareFunc {
	publicHTTPS := strings.HasPrefix(publicOrigin, "https://")
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if publicHTTPS || c.Request().TLS != nil {
				c.Response().Header().Set("Strict-Transport-Security", hstsValue)
			}
			return next(c)
		}
	}
}
