package handlers

import (
	"bytes"
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// render renders c into a buffer first, so a component that fails half way
// never sends half a page, then writes it with status.
func render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// renderPage answers htmx with fragment and any other request with full
// (fragmentWanted).
func renderPage(c echo.Context, status int, full, fragment templ.Component) error {
	if fragmentWanted(c) {
		return render(c, status, fragment)
	}
	return render(c, status, full)
}

// fragmentWanted reports whether htmx asked for a fragment of the page, and
// says so in Vary: the same URL answers with a fragment or a full page, so
// caches must keep both apart.
func fragmentWanted(c echo.Context) bool {
	c.Response().Header().Add("Vary", "HX-Request")
	return isHTMX(c)
}

// isHTMX reports whether htmx made the request, in which case a fragment is
// enough. Pages ask fragmentWanted, which also sets Vary.
func isHTMX(c echo.Context) bool {
	return c.Request().Header.Get("HX-Request") == "true"
}

// redirectSeeOther sends the browser to url with GET after a POST.
func redirectSeeOther(c echo.Context, url string) error {
	return c.Redirect(http.StatusSeeOther, url)
}
