// Package flowschemas is the API Priority and Fairness pages of FlowSchemas:
// the overview in evaluation order (it replaces the generic list), the
// request classifier, and the structured FlowSchema form with its preview,
// save and conflict answers; and the API server's live flow-control load as
// the user may see it (load.go), which the handlers package also puts on the
// lists and detail pages of priority levels, FlowSchemas and webhooks. The
// form's use case is internal/flowschemaform (and its field codec
// internal/flowschemaform/form); the classification is internal/apf; the load
// is sampled by internal/apfload.
package flowschemas

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/flowschemaform"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/internal/writeaudit"
)

// Deps are the FlowSchema pages' ports.
type Deps struct {
	page.Base
	Cluster ports.Cluster
	// Access asks the API server as the user (the overview's "New" link);
	// ReadOnly offers no changes.
	Access   ports.Access
	ReadOnly bool
	// MayList asks the API server whether the user may list k.
	MayList func(c echo.Context, k kube.Kind) bool
	Cleanup page.Cleanup
	// Detail serves the generic detail page of the :kind and :name
	// parameters (a FlowSchema named "classify", form.go).
	Detail echo.HandlerFunc
	// Editor reads and writes FlowSchemas as the user (the form's use case,
	// internal/flowschemaform), Audit records its writes under the user
	// (internal/writeaudit), and Flash shows a write's result on the page
	// it redirects to. Diffs and refusals are handlers/page's (problem.go).
	Editor ports.ObjectEditor
	Audit  *writeaudit.Trail
	Flash  page.Flash
	// APFLoad is the shared sampler of the API server's flow-control
	// metrics, shown to users who may get /metrics (URLAccess); nil for
	// either leaves the load out of the pages.
	APFLoad   ports.APFLoad
	URLAccess ports.URLAccess
}

// Handlers serves the FlowSchema routes.
type Handlers struct{ d Deps }

// New builds the FlowSchema pages' handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// formCase is the FlowSchema form's use case for this request's user: its
// writes are audited under their name.
func (h *Handlers) formCase(c echo.Context) *flowschemaform.Service {
	return &flowschemaform.Service{API: h.d.Editor, Cache: h.d.Cluster, Audit: h.d.Audit.For(c.Request().Context())}
}

// RegisterReads adds the overview and the classifier behind listed (the
// list's access check: a Forbidden banner), and the classifier's old address
// behind ofKind (403). Static segments win over :kind.
func (h *Handlers) RegisterReads(e *echo.Echo, listed, ofKind echo.MiddlewareFunc) {
	e.GET(urls.FlowSchemas, h.flowSchemas, listed)
	e.GET(urls.Classify, h.classify, listed)
	// A FlowSchema named "classify" there, else a redirect (form.go).
	e.GET(urls.ClassifyOld, h.classifyOrFlowSchema, ofKind)
}

// RegisterForm adds the structured form to mutating (the read-only mode's
// group) behind ofKind; "-" is no FlowSchema name.
func (h *Handlers) RegisterForm(mutating *echo.Group, ofKind echo.MiddlewareFunc) {
	mutating.GET(urls.FlowSchemaFormNew, h.newFlowSchemaForm, ofKind)
	mutating.POST(urls.FlowSchemaFormNew, h.createFlowSchemaForm, ofKind)
	mutating.GET(urls.FlowSchemaFormRoute, h.editFlowSchemaForm, ofKind)
	mutating.POST(urls.FlowSchemaFormRoute, h.updateFlowSchemaForm, ofKind)
}
