package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/static"
)

// maxBody bounds every request body; forms here are small and an editor body
// over 1 MiB is refused before it reaches the API server. Binary units: echo
// reads "1M" as 1,000,000 bytes.
const maxBody = "1MiB"

// New builds the echo server with the whole route table.
func New(deps Deps) *echo.Echo {
	h := &Handlers{deps: deps, gate: gateFor(deps), csrStorms: newCSRStormIndex(deps.Cluster), backends: newBackendCache()}
	h.csrf = csrfSessions(deps, h.gate)
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = h.errorHandler

	// Outermost, so a recovered panic is counted as the 500 it becomes.
	e.Use(observeRequests(deps.Metrics, e))
	e.Use(middleware.Recover())
	e.Use(requestLog(deps.Log))
	e.Use(securityHeaders)
	e.Use(strictTransport)                                      // HSTS over TLS (hsts.go)
	e.Use(h.limitSignIns(newSignInLimiter(deps.signInLimit()))) // before any body is read (signin_limit.go)
	e.Use(explainBodyLimit)
	e.Use(bodyLimit()) // maxBody, editorBody on the editor's routes, loginBody on /login (edit_limit.go)
	e.Use(requireIdentity(h.gate, h.loginPage))
	// Only now is a body read: nothing a client without a session sends is buffered.
	e.Use(bufferChunkedBody)
	e.Use(csrfGuard(h.csrf)) // origin check and session-bound token (csrf.go)

	e.GET("/healthz", h.healthz)
	e.GET("/readyz", h.readyz)
	e.GET("/login", h.login)
	// Token mode's sign-in form; CSRF-checked like every POST, by a pre-session (login CSRF).
	e.POST("/login", h.loginWithToken)
	// OIDC sign-in: the start and the provider's callback (login_oidc.go).
	e.GET(OIDCLoginPath, h.beginOIDC)
	e.GET(OIDCCallbackPath, h.finishOIDC)
	// The bundle goes out gzip-compressed: the page weight budget
	// (views/layout/budget_test.go) counts compressed bytes.
	e.Group(static.Prefix, middleware.Gzip()).StaticFS("", static.FS)
	e.POST("/logout", h.logout)

	e.GET("/", h.home)
	if deps.DevUI {
		e.GET("/ui", h.gallery)
	}
	// Global search by name across kinds (search.go); static, so it wins over /:kind.
	e.GET(SearchPath, h.search)
	// One event stream per tab; no gzip or timeout middleware may wrap it.
	e.GET(livePath, h.events)
	// The CSR queue replaces the generic list; static segments win over :kind.
	e.GET("/csrs", h.csrQueue)
	e.GET("/csrs/:name/certificate", h.csrCertificate)
	e.GET("/csrs/groups/:id", h.csrGroupPreview)
	// A kubelet-serving CSR's SANs against its Node, read as the user after the page (csr_node.go).
	e.GET("/csrs/:name/node-check", h.csrNodeCheck)
	// FlowSchemas in evaluation order, and the request classifier.
	e.GET("/flowschemas", h.flowSchemas)
	e.GET(present.ClassifyPath, h.classify)
	// The classifier's old address: a FlowSchema named "classify" there, else a redirect (apf_form.go).
	e.GET("/flowschemas/classify", h.classifyOrFlowSchema)
	// A CRD version's schema explorer (insight_schema.go).
	e.GET("/crds/:name/schema/:version", h.crdSchema)
	// A CRD's custom resources: the API server's table, and one object's YAML (editor_cr.go).
	e.GET("/crds/:name/instances", h.crInstances)
	e.GET("/crds/:name/instances/:ns/:obj", h.crInstance)
	// Which webhooks would intercept a request (insight_intercept.go).
	e.GET("/validatingwebhooks/intercept", h.intercept)
	// The auditor's views (activity.go): what the console observed, its
	// exports, and one object's history. Read routes: they work in --read-only.
	e.GET(ActivityPath, h.activityPage)
	e.GET(ActivityPath+".csv", h.activityCSV)
	e.GET(ActivityPath+".json", h.activityJSON)
	e.GET("/:kind/:name/history", h.history)
	e.GET("/:kind/:name/yaml", h.objectYAML) // a large object's YAML, loaded on demand (detail_yaml.go)
	e.GET("/:kind", h.list)
	e.GET("/:kind/:name", h.detail)

	mutating := e.Group("", refuseInReadOnly(deps.ReadOnly))
	mutating.POST("/csrs/:name/approve", h.approveCSR)
	mutating.POST("/csrs/:name/deny", h.denyCSR)
	mutating.POST("/csrs/bulk", h.bulkDecideCSRs)
	mutating.POST("/csrs/groups/:id/decide", h.csrGroupDecide)
	// The editor's pages are in this group too: in read-only mode they are
	// refused rather than offering changes that would be refused.
	mutating.GET("/:kind/new", h.newObject)
	mutating.POST(editorRoute("/:kind/create"), h.createObject)
	mutating.GET("/:kind/:name/edit", h.editObject)
	mutating.POST(editorRoute("/:kind/:name/preview"), h.previewEdit)
	mutating.POST(editorRoute("/:kind/:name/apply"), h.applyEdit)
	mutating.POST(editorRoute("/:kind/:name/rebase"), h.rebaseEdit)
	// The same editor for a CRD's custom resources (editor_cr.go); ns is "_" when cluster-scoped.
	mutating.GET("/crds/:name/instances/new", h.newCR)
	mutating.POST(editorRoute("/crds/:name/instances/create"), h.createCR)
	mutating.GET("/crds/:name/instances/:ns/:obj/edit", h.editCR)
	mutating.POST(editorRoute("/crds/:name/instances/:ns/:obj/preview"), h.previewCR)
	mutating.POST(editorRoute("/crds/:name/instances/:ns/:obj/apply"), h.applyCR)
	mutating.POST(editorRoute("/crds/:name/instances/:ns/:obj/rebase"), h.rebaseCR)
	mutating.GET("/crds/:name/instances/:ns/:obj/delete", h.deleteCR)
	mutating.POST("/crds/:name/instances/:ns/:obj/delete", h.confirmDeleteCR)
	mutating.GET("/:kind/:name/delete", h.deleteObject)
	mutating.POST("/:kind/:name/delete", h.confirmDelete)
	// The structured FlowSchema form (apf_form.go); "-" is no FlowSchema name.
	mutating.GET(flowSchemaFormNew, h.newFlowSchemaForm)
	mutating.POST(flowSchemaFormNew, h.createFlowSchemaForm)
	mutating.GET("/flowschemas/:name/form", h.editFlowSchemaForm)
	mutating.POST("/flowschemas/:name/form", h.updateFlowSchemaForm)

	e.RouteNotFound("/*", func(c echo.Context) error {
		return echo.NewHTTPError(http.StatusNotFound, "There is no page at this address.")
	})
	return e
}
