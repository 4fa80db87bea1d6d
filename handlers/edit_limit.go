package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"
)

// bodyTooLarge is the answer to a request body over maxBody.
func bodyTooLarge() error {
	return echo.NewHTTPError(http.StatusRequestEntityTooLarge,
		"What you sent is larger than "+maxBody+", the most clusterdesk accepts in one request, so it was refused before anything reached the API server. "+
			"Go back to keep your text. An object this large is better applied with kubectl.")
}

// explainBodyLimit replaces the body limit middleware's bare "Request Entity
// Too Large" with a message that says what happened and what to do. It is
// installed right before middleware.BodyLimit.
func explainBodyLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		var he *echo.HTTPError
		if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge && he.Message == echo.ErrStatusRequestEntityTooLarge.Message {
			return bodyTooLarge()
		}
		return err
	}
}
