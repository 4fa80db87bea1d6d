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
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// Lists is what the overview shares with every list page, which the
// handlers package wires (access.go, pages.go, list_*.go; the cleanup's links
// are handlers/cleanup's).
type Lists interface {
	// MayList asks the API server whether the user may list k.
	MayList(c echo.Context, k kube.Kind) bool
	// MayListKind is the route's access check's answer for its kind.
	MayListKind(c echo.Context) bool
	// ForbiddenBanner says the user may not list k (err: the API server's answer).
	ForbiddenBanner(k kube.Kind, err error) model.Banner
	// SelectorStatus keeps the label selector on the page and answers 400
	// for one that does not parse.
	SelectorStatus(p *model.ListPage, q present.ListQuery, status int) int
	// LintStatus answers 400 for a lint= value the list does not know,
	// saying why on the page.
	LintStatus(p *model.ListPage, q present.ListQuery, status int) int
	// NewHref and CleanupHref are the list's create and cleanup links, ""
	// when the user is not offered them.
	NewHref(c echo.Context, id kube.KindID) string
	CleanupHref(c echo.Context, id kube.KindID) string
	// AddTicks adds the rows' tick boxes for a cleanup of ticked rows.
	AddTicks(c echo.Context, p *model.FlowSchemaListPage)
	// Detail serves the generic detail page of the :kind and :name parameters.
	Detail(c echo.Context) error
}

// Editor is what the FlowSchema form shares with the YAML editor that the
// handlers package wires: the use case as the user, and the flash of a
// write's result. Diffs and refusals are handlers/page's (problem.go).
type Editor interface {
	Service(c echo.Context) *flowschemaform.Service
	FlashAndRedirect(c echo.Context, title, msg string, warnings []string, to string) error
}

// Deps are the FlowSchema pages' ports.
type Deps struct {
	page.Base
	Cluster ports.Cluster
	Lists   Lists
	Editor  Editor
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
