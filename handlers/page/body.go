package page

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// MaxBody bounds every request body; forms here are small and an editor body
// over 1 MiB is refused before it reaches the API server (handlers/routes.go
// installs the limits). Binary units: echo reads "1M" as 1,000,000 bytes.
const MaxBody = "1MiB"

// BodyTooLarge is the answer to a request body over MaxBody, for a handler
// whose form could not be read.
func BodyTooLarge() error { return BodyTooLargeFor(MaxBody) }

// BodyTooLargeFor is the answer to a request body over limit.
func BodyTooLargeFor(limit string) error {
	return echo.NewHTTPError(http.StatusRequestEntityTooLarge,
		"What you sent is larger than "+limit+", the most clusterdesk accepts in one request here, so it was refused before anything reached the API server. "+
			"Go back to keep your text. An object this large is better applied with kubectl.")
}

// BodyLimitKey holds the body limit of the request's route (MaxBody, or a
// larger one such as the editor's), set by the handlers' body limit
// middleware (handlers/edit_limit.go) for the answer of a form too large.
const BodyLimitKey = "body-limit"

// bodyLimitOf is the body limit of c's route, MaxBody when none was set.
func bodyLimitOf(c echo.Context) string {
	if l, ok := c.Get(BodyLimitKey).(string); ok && l != "" {
		return l
	}
	return MaxBody
}

// ParseForm reads a POSTed form, sent as multipart/form-data (the editor's
// forms: no percent-encoding, so a YAML text is sent at its own size) or
// URL-encoded, within the route's body limit. Values end up in PostForm
// either way.
func ParseForm(c echo.Context) error {
	req := c.Request()
	var err error
	if strings.HasPrefix(req.Header.Get(echo.HeaderContentType), echo.MIMEMultipartForm) {
		// The body limit bounds the body; keep it all in memory (no temp files).
		err = req.ParseMultipartForm(8 << 20)
	} else {
		err = req.ParseForm()
	}
	if err != nil {
		if errors.Is(err, echo.ErrStatusRequestEntityTooLarge) || strings.Contains(err.Error(), "request body too large") {
			return BodyTooLargeFor(bodyLimitOf(c))
		}
		return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	return nil
}
