package handlers

import (
	"bytes"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
)

// bufferChunkedBody reads a body of unknown length (chunked) before any
// handler does. middleware.BodyLimit refuses a body that announces too large
// a Content-Length at once, but a chunked body only fails when it is read,
// and a form parser swallows that failure: c.FormValue would return "" and
// the handler would act on a form with its fields missing. Read here, an
// oversized body is a 413 (explained by explainBodyLimit) before the handler
// runs. It goes after middleware.BodyLimit, whose reader bounds what is
// buffered to the route's limit, and after requireIdentity: the body of a
// request without a session is never read (public routes: /login's is small).
func bufferChunkedBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.ContentLength >= 0 || req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		buf, err := io.ReadAll(req.Body)
		if err != nil {
			return err
		}
		_ = req.Body.Close()
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(buf)), int64(len(buf))
		return next(c)
	}
}
