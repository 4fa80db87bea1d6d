// Package activity is the auditor's views: what the console observed of
// changes (internal/activity, which this package imports under the same
// name) merged with the cached objects' managedFields, as a page and as CSV
// and JSON exports, and one object's history. Read routes: they work in
// --read-only mode.
package activity

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/activity"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// Deps are the activity views' ports.
type Deps struct {
	page.Base
	Cluster ports.Cluster
	// Store is what the console observed of changes; nil leaves the pages
	// without watch history (managedFields only).
	Store *activity.Store
	// MayList answers whether the request's user may list k (the access
	// check of every kind route, handlers/access.go).
	MayList func(c echo.Context, k kube.Kind) bool
	// Kind resolves the :kind parameter, or answers 404 (handlers/pages.go).
	Kind func(c echo.Context) (kube.Kind, error)
}

// Handlers serves the activity routes.
type Handlers struct{ d Deps }

// New builds the activity views' handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// Register adds the activity page, its exports, and one object's history
// behind ofKind (the :kind access check).
func (h *Handlers) Register(e *echo.Echo, ofKind echo.MiddlewareFunc) {
	e.GET(urls.Activity, h.activityPage)
	e.GET(urls.ActivityCSV, h.activityCSV)
	e.GET(urls.ActivityJSON, h.activityJSON)
	e.GET(urls.HistoryRoute, h.history, ofKind)
}
