package handlers

import (
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/static"
)

// staticCaching lets browsers keep the bundle: pages link it with its content
// hash (static.AssetPath), so a versioned URL is cached for a year and never
// fetched again, and any other URL of a file is revalidated with its ETag (the
// same hash), answered 304 by http.ServeContent when unchanged. Without it
// every page view downloaded, decompressed and compiled app.js and app.css
// again: the embedded files have no modification time to cache by.
func staticCaching(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		name := strings.TrimPrefix(c.Request().URL.Path, static.Prefix)
		if h, ok := static.Version(name); ok {
			header := c.Response().Header()
			header.Set("Cache-Control", static.CacheControl(name, c.QueryParam("v")))
			header.Set("ETag", `"`+h+`"`)
		}
		return next(c)
	}
}
