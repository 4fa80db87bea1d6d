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

// isHTMX reports whether htmx made the request, in which case a fragment is enough.
func isHTMX(c echo.Context) bool {
	return c.Request().Header.Get("HX-Request") == "true"
}

// redirectSeeOther sends the browser to url with GET after a POST.
func redirectSeeOther(c echo.Context, url string) error {
	return c.Redirect(http.StatusSeeOther, url)
}
