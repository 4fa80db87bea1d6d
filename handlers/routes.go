package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/clusterdesk/clusterdesk/static"
)

// maxBody bounds every request body; forms here are small and an editor body
// over 1 MiB is refused before it reaches the API server. Binary units: echo
// reads "1M" as 1,000,000 bytes.
const maxBody = "1MiB"

// New builds the echo server with the whole route table.
func New(deps Deps) *echo.Echo {
	h := &Handlers{deps: deps}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = h.errorHandler

	e.Use(middleware.Recover())
	e.Use(requestLog(deps.Log))
	e.Use(securityHeaders)
	e.Use(explainBodyLimit)
	e.Use(middleware.BodyLimit(maxBody))
	e.Use(bufferChunkedBody)
	e.Use(requireSession(deps.Sessions))
	e.Use(csrf())

	e.GET("/healthz", h.healthz)
	e.GET("/readyz", h.readyz)
	e.GET("/login", h.login)
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
	// FlowSchemas in evaluation order, and the request classifier.
	e.GET("/flowschemas", h.flowSchemas)
	e.GET("/flowschemas/classify", h.classify)
	// A CRD version's schema explorer (insight_schema.go).
	e.GET("/crds/:name/schema/:version", h.crdSchema)
	// Which webhooks would intercept a request (insight_intercept.go).
	e.GET("/validatingwebhooks/intercept", h.intercept)
	e.GET("/:kind", h.list)
	e.GET("/:kind/:name", h.detail)

	mutating := e.Group("", refuseInReadOnly(deps.ReadOnly))
	mutating.POST("/csrs/:name/approve", h.approveCSR)
	mutating.POST("/csrs/:name/deny", h.denyCSR)
	mutating.POST("/csrs/bulk", h.bulkDecideCSRs)
	// The editor's pages are in this group too: in read-only mode they are
	// refused rather than offering changes that would be refused.
	mutating.GET("/:kind/new", h.newObject)
	mutating.POST("/:kind/create", h.createObject)
	mutating.GET("/:kind/:name/edit", h.editObject)
	mutating.POST("/:kind/:name/preview", h.previewEdit)
	mutating.POST("/:kind/:name/apply", h.applyEdit)
	mutating.POST("/:kind/:name/rebase", h.rebaseEdit)
	mutating.GET("/:kind/:name/delete", h.deleteObject)
	mutating.POST("/:kind/:name/delete", h.confirmDelete)

	e.RouteNotFound("/*", func(c echo.Context) error {
		return echo.NewHTTPError(http.StatusNotFound, "There is no page at this address.")
	})
	return e
}
