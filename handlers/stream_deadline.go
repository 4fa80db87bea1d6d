package handlers

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// liftReadDeadline clears the connection's read deadline (the server's
// ReadTimeout) for the event stream, once the request is authenticated. A GET
// has no body, so net/http starts a background read right away to notice the
// client leaving; when ReadTimeout passes, that read fails with a timeout and
// net/http cancels the request's context, which would end every stream after
// ReadTimeout. The stream's life is bounded by its session instead
// (live.Subscription.Until), and a vanished client by the heartbeat's writes.
func liftReadDeadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := http.NewResponseController(c.Response()).SetReadDeadline(time.Time{})
		// httptest's recorder cannot set deadlines; a real connection can.
		if err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return next(c)
	}
}
