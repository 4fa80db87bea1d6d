package handlers

import "github.com/labstack/echo/v4"

// hstsValue is the Strict-Transport-Security of every answer sent over TLS:
// one year, as the usual preload lists ask. No includeSubDomains: the console
// is one service among others under its domain, and must not decide for them.
const hstsValue = "max-age=31536000"

// strictTransport tells browsers to come back over HTTPS only, on answers
// served over TLS. Whether the connection is TLS is what the request says
// (net/http sets Request.TLS when the listener is tls.NewListener's), not a
// flag: over plain HTTP the header would be ignored by browsers anyway and
// would only mislead, and behind a TLS-terminating proxy it is the proxy's to
// send.
func strictTransport(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().TLS != nil {
			c.Response().Header().Set("Strict-Transport-Security", hstsValue)
		}
		return next(c)
	}
}
