// Package gallery is the component gallery at /ui: every component of
// views/components on one page, for developers (routed only with --dev-ui).
package gallery

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// Handlers serves the gallery.
type Handlers struct{ b page.Base }

// New builds the gallery's handlers.
func New(b page.Base) *Handlers { return &Handlers{b: b} }

// Register adds the gallery to e.
func (h *Handlers) Register(e *echo.Echo) { e.GET(urls.Gallery, h.gallery) }

// gallery renders the component gallery.
func (h *Handlers) gallery(c echo.Context) error {
	return page.Render(c, http.StatusOK, pages.Gallery(h.b.Chrome(c, "Component gallery", "")))
}
