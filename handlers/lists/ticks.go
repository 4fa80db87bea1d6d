package lists

import (
	"github.com/labstack/echo/v4"

	handlerpage "github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// addTicks gives page's rows their tick boxes when kind offers cleanup, and,
// when the user may delete that kind, sets where "Delete selected…" posts
// them (a POST to the cleanup preview, handlers/cleanup
// previewTickedCleanup). Without it the column stays, hidden (TickHeader).
func (h *Handlers) addTicks(c echo.Context, page *model.ListPage, id kube.KindID) {
	if page.Forbidden || !handlerpage.Tickable(h.d.ReadOnly, id) {
		return
	}
	if h.d.Cleanup.MayDeleteAll(c, id) {
		page.TickAction = urls.Cleanup(id)
	}
	for i := range page.Rows {
		page.Rows[i] = handlerpage.WithTick(h.d.Cluster, id, page.Rows[i])
	}
}
