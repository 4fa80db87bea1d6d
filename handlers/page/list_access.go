package page

import (
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// listAccessKey holds the route's access check's answer for the request
// (handlers' kindAccess, access.go).
const listAccessKey = "clusterdesk.mayListKind"

// SetMayListKind records the route's access check's answer for the handler.
func SetMayListKind(c echo.Context, ok bool) { c.Set(listAccessKey, ok) }

// MayListKind is the route's access check's answer: whether the user may
// list the route's kind. It is false on a route without the check, so a
// handler that asks there shows nothing rather than everything.
func MayListKind(c echo.Context) bool {
	ok, _ := c.Get(listAccessKey).(bool)
	return ok
}

// ForbiddenBanner says the user may not list k (err: the API server's
// answer, nil when the console's own access check refused).
func ForbiddenBanner(k kube.Kind, err error) model.Banner {
	msg := fmt.Sprintf("Your Kubernetes identity may not list %s, so clusterdesk does not show them.", k.Title)
	if err != nil {
		msg += " The API server said: " + err.Error()
	}
	return model.Banner{Tone: model.ToneError, Title: "Forbidden", Message: msg, TestID: "banner-forbidden"}
}
