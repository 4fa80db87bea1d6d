package page

import (
	"net/http"

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
