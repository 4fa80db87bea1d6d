// Package page is what every feature package under handlers/ shares: the one
// templ→echo helper (render into a buffer, then write), htmx's fragments,
// the answers about request bodies, and the page chrome as a function the
// handlers package provides. It imports no feature and not handlers, so
// every feature can import it.
package page

import (
	"bytes"
	"net/http"
	"sync"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"
)

// Render renders comp into a buffer first, so a component that fails half
// way never sends half a page, then writes it with status.
func Render(c echo.Context, status int, comp templ.Component) error {
	buf := renderBuffers.Get().(*bytes.Buffer)
	defer putRenderBuffer(buf)
	if err := comp.Render(c.Request().Context(), buf); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// renderBuffers are Render's buffers, reused: a buffer grown by doubling to a
// 400 KB queue page allocates ~1 MB per view (67 MB over the page
// benchmark's 100 views at the large shapes). HTMLBlob has written the bytes
// to the connection when Render returns, so the buffer is free again.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledRender is the largest buffer kept for reuse: a rare huge page's
// buffer goes to the GC rather than staying in the pool.
const maxPooledRender = 2 << 20

func putRenderBuffer(buf *bytes.Buffer) {
	if buf.Cap() > maxPooledRender {
		return
	}
	buf.Reset()
	renderBuffers.Put(buf)
}

// RenderPage answers htmx with fragment and any other request with full
// (FragmentWanted).
func RenderPage(c echo.Context, status int, full, fragment templ.Component) error {
	if FragmentWanted(c) {
		return Render(c, status, fragment)
	}
	return Render(c, status, full)
}

// FragmentWanted reports whether htmx asked for a fragment of the page, and
// says so in Vary: the same URL answers with a fragment or a full page, so
// caches must keep both apart.
func FragmentWanted(c echo.Context) bool {
	c.Response().Header().Add("Vary", "HX-Request")
	return IsHTMX(c)
}

// IsHTMX reports whether htmx made the request, in which case a fragment is
// enough. Pages ask FragmentWanted, which also sets Vary.
func IsHTMX(c echo.Context) bool {
	return c.Request().Header.Get("HX-Request") == "true"
}

// RedirectSeeOther sends the browser to url with GET after a POST.
func RedirectSeeOther(c echo.Context, url string) error {
	return c.Redirect(http.StatusSeeOther, url)
}
