// Package csrs is the CertificateSigningRequests' approval queue: the queue
// page (it replaces the generic list), the bulk decisions of ticked rows, and
// the preview and confirmed decision of a storm group. The queue's engine is
// internal/csrqueue, the decisions' use case internal/decide. The CSR detail
// page, the single decisions and the certificate upload stay in the handlers
// package for now (csr_detail.go, csr_decide.go, csr_issue.go), which hands
// this package the decision use case as the user through Deps.Decisions.
package csrs

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/decide"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// Lists is what the queue shares with every list page, which the handlers
// package owns (access.go, pages.go, list_new.go, cleanup_links.go).
type Lists interface {
	// MayListKind is the route's access check's answer for its kind.
	MayListKind(c echo.Context) bool
	// ForbiddenBanner says the user may not list k (err: the API server's answer).
	ForbiddenBanner(k kube.Kind, err error) model.Banner
	// NewHref is the list's create link, "" when the user is not offered it.
	NewHref(c echo.Context, id kube.KindID) string
	// CleanupHref is the queue's cleanup links (by filter, of ticked rows).
	CleanupHref(c echo.Context, q csrqueue.Query) (href, ticked string)
	// MayDeleteAll reports whether the user may delete the kind's objects.
	MayDeleteAll(c echo.Context, id kube.KindID) bool
}

// Deps are the queue's ports.
type Deps struct {
	page.Base
	Cluster ports.Cluster
	// Queue is this server's CSR queue caches, shared with the live rows
	// and the detail page (handlers' csrQueueOf).
	Queue *csrqueue.Queue
	Lists Lists
	// Kind resolves the CSR kind (404 when the console has no CSR pages).
	Kind func() (kube.Kind, error)
	// Decisions is the decision use case as the signed-in user of c, each
	// decision audited with who made it (csr_decide.go).
	Decisions func(c echo.Context) decide.Decisions
	// User is who the request acts as, for the decisions' records.
	User func(c echo.Context) string
}

// Handlers serves the queue's routes.
type Handlers struct{ d Deps }

// New builds the queue's handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// RegisterReads adds the queue behind listed (the list's access check: a
// Forbidden banner) and a group's preview behind ofKind (403); static
// segments win over :kind.
func (h *Handlers) RegisterReads(e *echo.Echo, listed, ofKind echo.MiddlewareFunc) {
	e.GET(urls.CSRs, h.csrQueue, listed)
	e.GET(urls.CSRGroupRoute, h.csrGroupPreview, ofKind)
}

// RegisterDecisions adds the bulk and group decisions to mutating (the
// read-only mode's group) behind ofKind.
func (h *Handlers) RegisterDecisions(mutating *echo.Group, ofKind echo.MiddlewareFunc) {
	mutating.POST(urls.CSRBulk, h.bulkDecideCSRs, ofKind)
	mutating.POST(urls.CSRGroupDecideRoute, h.csrGroupDecide, ofKind)
}
