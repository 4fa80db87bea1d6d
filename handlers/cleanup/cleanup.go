// Package cleanup is the cleanup feature's handlers: the preview of deleting
// many objects of a kind (or a CRD's custom resources) by filter or ticked
// rows, the confirmation bound to the preview's fingerprint, and the result
// page, sent with progress lines while a long cleanup runs; and the lists'
// links into it (links.go). The use case
// (select, fingerprint, dry run, delete by UID) is internal/cleanup, which
// this package imports under the same name.
package cleanup

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/internal/writeaudit"
)

// Deps are the cleanup's ports.
type Deps struct {
	page.Base
	// Cluster is the shared cache (the kinds' served versions), Access the
	// user's access reviews (nil: the lists offer no tick boxes' action).
	Cluster ports.Cluster
	Access  ports.Access
	// ReadOnly offers no cleanup links (the routes are refused anyway).
	ReadOnly bool
	// Editor deletes and lists custom resources as the user; nil offers no
	// cleanup (503).
	Editor ports.ObjectEditor
	// Audit is the audit trail of the writes (internal/writeaudit): each
	// request's deletions are recorded under its user.
	Audit *writeaudit.Trail
	// ProgressAfter is how long a confirmed cleanup may run before its page
	// is sent with progress lines; zero is DefaultProgressAfter.
	ProgressAfter time.Duration
}

// Handlers serves the cleanup routes.
type Handlers struct{ d Deps }

// New builds the cleanup's handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// Register adds the cleanup routes to mutating (the read-only mode's group),
// each behind its kind's access check: ofKind for /:kind/-/cleanup, crds for
// a CRD's custom resources. A POST to the preview comes from ticked rows;
// only the confirmation deletes.
func (h *Handlers) Register(mutating *echo.Group, ofKind, crds echo.MiddlewareFunc) {
	mutating.GET(urls.CleanupRoute, h.previewCleanup, ofKind)
	mutating.POST(urls.CleanupRoute, h.previewTickedCleanup, ofKind)
	mutating.POST(urls.CleanupConfirmRoute, h.confirmCleanup, ofKind)
	mutating.GET(urls.CRCleanupRoute, h.previewCRCleanup, crds)
	mutating.POST(urls.CRCleanupRoute, h.previewTickedCRCleanup, crds)
	mutating.POST(urls.CRCleanupConfirmRoute, h.confirmCRCleanup, crds)
}
