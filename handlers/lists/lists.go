// Package lists is the generic pages of every kind the registry declares
// (handlers/kinds): a kind's list (GET /:kind) with its filter, its tick boxes
// and its links, and one object's detail page (GET /:kind/:name) with its YAML,
// also loaded on demand (GET /:kind/:name/yaml). A kind with pages of its own
// (the CSR queue, the FlowSchema overview) replaces the list at a static
// address; what the root adds to a few kinds' pages (direct lookups, the API
// server's metrics, the CSR request's page) comes in as Hooks.
package lists

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// Hooks is what the root adds to one kind's pages from its own services
// (handlers' kind_hooks.go); an ordinary kind has none (all nil).
type Hooks struct {
	// Page, when set, replaces the generic detail page (the CSR request's page).
	Page echo.HandlerFunc
	// Detail, when set, builds the detail page instead of the declaration's
	// Detail: for kinds whose page adds direct lookups as the user.
	Detail func(c echo.Context, name string, now time.Time) (model.DetailPage, error)
	// ListMetrics and DetailMetrics, when set, add what the API server's
	// /metrics says about the kind's objects (APF load, webhook health), as
	// the user may see it.
	ListMetrics   func(c echo.Context, id kube.KindID, p *model.ListPage)
	DetailMetrics func(c echo.Context, id kube.KindID, name string, p *model.DetailPage)
	// DetailHistory, when set, adds what the ledger says of the object
	// (a CSR approval policy's decisions per version, handlers/ledger).
	DetailHistory func(c echo.Context, name string, p *model.DetailPage)
}

// Deps are the generic pages' ports.
type Deps struct {
	page.Base
	Cluster ports.Cluster
	// Access asks the API server as the user (the "New" link); ReadOnly
	// offers no changes.
	Access   ports.Access
	ReadOnly bool
	Cleanup  page.Cleanup
	// MayChange reports whether the user may update and delete an object
	// (a detail page's Edit YAML and Delete links).
	MayChange func(c echo.Context, k kube.Kind, name string) (update, del bool)
	// Hooks is what the root adds to kind id's pages.
	Hooks func(id kube.KindID) Hooks
}

// Handlers serves the generic list and detail pages.
type Handlers struct{ d Deps }

// New builds the generic pages' handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// Register adds a large object's YAML and one object's page behind ofKind
// (403 for a user who may not list the kind), and the list behind listed (a
// Forbidden banner). They come last of the kind routes: static segments of
// the features win over :kind.
func (h *Handlers) Register(e *echo.Echo, listed, ofKind echo.MiddlewareFunc) {
	e.GET(urls.YAMLRoute, h.objectYAML, ofKind) // loaded on demand (pages.go)
	e.GET(urls.ListRoute, h.list, listed)
	e.GET(urls.ObjectRoute, h.Detail, ofKind)
}

// kindFor resolves the :kind path segment, or answers 404.
func (h *Handlers) kindFor(c echo.Context) (kube.Kind, kinds.Kind, error) {
	return page.KindFor(c, h.d.Cluster)
}
