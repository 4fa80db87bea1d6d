package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/views/pages"
)

// gallery renders the component gallery (only routed with --dev-ui).
func (h *Handlers) gallery(c echo.Context) error {
	return render(c, http.StatusOK, pages.Gallery(h.pageChrome.Build(c, "Component gallery", "")))
}
