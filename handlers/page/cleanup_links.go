package page

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Cleanup is the cleanup's links and tick boxes' action that a list carries
// (handlers/cleanup's Handlers, links.go): the generic lists' and the
// FlowSchema overview's.
type Cleanup interface {
	// Href is the list's cleanup link, "" when the user is not offered it.
	Href(c echo.Context, id kube.KindID) string
	// MayDeleteAll reports whether the user may delete the kind's objects.
	MayDeleteAll(c echo.Context, id kube.KindID) bool
}
