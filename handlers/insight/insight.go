// Package insight is the insight pages that have routes of their own: a CRD
// version's schema explorer and the interception simulator ("which webhooks
// and policies would intercept this request?", internal/intercept). The
// insights on the kinds' detail pages (webhook backends and health, a CSI
// driver's users, admission policies and bindings) are the kind registry's
// and stay with it in handlers (insight.go, webhook_health.go,
// admission_policies.go).
package insight

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// Deps are the insight pages' ports.
type Deps struct {
	page.Base
	Cluster ports.Cluster
	// Lookup reads the namespace, the resource's versions, access reviews and
	// params as the user; nil skips them (the simulator says so).
	Lookup ports.Lookup
	// LookupTimeout bounds the direct reads of one page.
	LookupTimeout time.Duration
	// MayList answers whether the request's user may list k (the access
	// check of every kind route, handlers/access.go).
	MayList func(c echo.Context, k kube.Kind) bool
	// ParseForm reads a POSTed form, multipart or URL-encoded, within the
	// route's body limit (handlers/edit_limit.go).
	ParseForm func(c echo.Context) error
}

// Handlers serves the insight routes.
type Handlers struct{ d Deps }

// New builds the insight pages' handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// Register adds the schema explorer behind crds (the CRDs' access check) and
// the interception simulator behind webhooks. The simulator's POST carries
// objects too large for a URL and changes nothing: readPOST marks it so in
// the route table (handlers/read_post.go), outside the read-only group.
func (h *Handlers) Register(e *echo.Echo, crds, webhooks echo.MiddlewareFunc, readPOST func(path string) string) {
	e.GET(urls.CRDSchemaRoute, h.crdSchema, crds)
	e.GET(urls.Intercept, h.intercept, webhooks)
	e.POST(readPOST(urls.Intercept), h.intercept, webhooks)
}
