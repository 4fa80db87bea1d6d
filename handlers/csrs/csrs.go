// Package csrs is the CertificateSigningRequests' approval workflow: the
// queue page (it replaces the generic list), the bulk decisions of ticked rows,
// the preview and confirmed decision of a storm group, and one request's page
// with its decision, its Node check, its certificate's download and the upload
// of an externally issued certificate. The queue's engine is internal/csrqueue,
// the use cases internal/decide and internal/issue, which this package runs as
// the signed-in user; the audit trail they write to is the handlers package's
// (Deps.Audit).
package csrs

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/internal/writeaudit"
)

// Cleanup is the cleanup's links that the queue carries (handlers/cleanup's
// Handlers, links.go).
type Cleanup interface {
	// CSRHref is the queue's cleanup links (by filter, of ticked rows).
	CSRHref(c echo.Context, q csrqueue.Query) (href, ticked string)
	// MayDeleteAll reports whether the user may delete the kind's objects.
	MayDeleteAll(c echo.Context, id kube.KindID) bool
}

// Deps are the workflow's ports.
type Deps struct {
	page.Base
	// Cluster is the shared cache; it also says whether the console has CSR
	// pages (404 without).
	Cluster ports.Cluster
	// Queue is this server's CSR queue caches, shared with the live rows
	// (handlers' csrQueueOf).
	Queue   *csrqueue.Queue
	Cleanup Cleanup
	// MayChange reports whether the user may update and delete the object
	// (a request's page's Edit YAML and Delete links, as on every detail page).
	MayChange func(c echo.Context, k kube.Kind, name string) (update, del bool)
	// Writer decides, Access reviews who may decide or sign for a signer, and
	// Issuer writes uploaded certificates (nil offers no upload), each as the
	// signed-in user.
	Writer ports.CSRDecider
	Access ports.Access
	Issuer ports.CSRIssuer
	// Lookup reads a kubelet-serving CSR's Node as the user; nil leaves the
	// Node check out.
	Lookup ports.Lookup
	// Audit is the audit trail of the writes (internal/writeaudit): each
	// request's decisions and uploads are recorded under its user.
	Audit *writeaudit.Trail
	// Flash queues banners for the page a write redirects to.
	Flash page.Flash
	// Console is who the console acts as: the request's user when none
	// signed in (page.User), for the decisions' records.
	Console  string
	ReadOnly bool
}

// Handlers serves the workflow's routes.
type Handlers struct{ d Deps }

// New builds the workflow's handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// user is who the request acts as.
func (h *Handlers) user(c echo.Context) string { return page.User(c, h.d.Console) }

// RegisterReads adds the queue behind listed (the list's access check: a
// Forbidden banner), and behind ofKind (403) a group's preview, a request's
// certificate download and its Node check, which the request's page loads
// after itself; static segments win over :kind. The request's page itself
// is the kind's detail page (Detail), on the generic object route.
func (h *Handlers) RegisterReads(e *echo.Echo, listed, ofKind echo.MiddlewareFunc) {
	e.GET(urls.CSRs, h.csrQueue, listed)
	e.GET(urls.CSRGroupRoute, h.csrGroupPreview, ofKind)
	e.GET(urls.CSRCertificateRoute, h.csrCertificate, ofKind)
	e.GET(urls.CSRNodeCheckRoute, h.csrNodeCheck, ofKind)
	e.GET(urls.CSRSANsRoute, h.csrSANs, ofKind)
	e.GET(urls.CSRPolicyApproveRoute, h.csrPolicyApprovePreview, ofKind)
}

// RegisterDecisions adds to mutating (the read-only mode's group), behind
// ofKind, a request's approval, denial and certificate upload (its body gets
// the default limit, room for issue.MaxChainBytes and issue.MaxBundleBytes),
// then the bulk and group decisions.
func (h *Handlers) RegisterDecisions(mutating *echo.Group, ofKind echo.MiddlewareFunc) {
	mutating.POST(urls.CSRApproveRoute, h.approveCSR, ofKind)
	mutating.POST(urls.CSRDenyRoute, h.denyCSR, ofKind)
	mutating.POST(urls.CSRIssueRoute, h.issueCSR, ofKind)
	mutating.POST(urls.CSRBulk, h.bulkDecideCSRs, ofKind)
	mutating.POST(urls.CSRGroupDecideRoute, h.csrGroupDecide, ofKind)
	mutating.POST(urls.CSRPolicyApproveRoute, h.csrPolicyApprove, ofKind)
}
