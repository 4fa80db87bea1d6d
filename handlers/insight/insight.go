// Package insight is the insight pages that have routes of their own: a CRD
// version's schema explorer and the interception simulator ("which webhooks
// and policies would intercept this request?", internal/intercept); and the
// detail pages that add direct lookups as the user (details.go: webhook
// backends, a CSI driver's users, a CRD's conversion backend and count of
// objects), which the kind registry serves on the generic detail route. The
// other insights on the kinds' detail pages (webhook health, admission
// policies and bindings) are the registry's and stay with it in handlers
// (webhook_health.go, admission_policies.go).
package insight

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/backends"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// Deps are the insight pages' ports.
type Deps struct {
	page.Base
	Cluster ports.Cluster
	// Lookup reads the namespace, the resource's versions, access reviews and
	// params, webhook Services and a CSI driver's users as the user; nil skips
	// them (the pages say so).
	Lookup ports.Lookup
	// Editor counts a CRD's custom resources as the user; nil leaves them
	// not counted.
	Editor ports.ObjectEditor
	// LookupTimeout bounds the direct reads of one page.
	LookupTimeout time.Duration
	// MayList answers whether the request's user may list k (the access
	// check of every kind route, handlers/access.go).
	MayList func(c echo.Context, k kube.Kind) bool
}

// Handlers serves the insight routes and builds the detail pages with lookups.
type Handlers struct {
	d Deps
	// backends remembers webhook Service lookups per user briefly.
	backends *backends.Cache
	// fields remembers the CRDs' counts of schema fields (crd_fields.go).
	fields schemaFields
}

// New builds the insight pages' handlers, with their own cache of webhook
// Service lookups: build one per server.
func New(d Deps) *Handlers { return &Handlers{d: d, backends: backends.NewCache()} }

// Register adds the schema explorer behind crds (the CRDs' access check) and
// the interception simulator behind webhooks. The simulator's POST carries
// objects too large for a URL and changes nothing: readPOST marks it so in
// the route table (handlers/read_post.go), outside the read-only group.
func (h *Handlers) Register(e *echo.Echo, crds, webhooks echo.MiddlewareFunc, readPOST func(path string) string) {
	e.GET(urls.CRDSchemaRoute, h.crdSchema, crds)
	e.GET(urls.Intercept, h.intercept, webhooks)
	e.POST(readPOST(urls.Intercept), h.intercept, webhooks)
}
