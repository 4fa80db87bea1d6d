package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	handlerpage "github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// tickable reports whether kind's list rows carry cleanup tick boxes: the
// condition of the cleanup links (handlers/cleanup, links.go) without their fragment test, so
// a swapped table keeps its boxes. It depends on the kind and the console's
// mode only, never on the user: live rows, rendered once for every viewer,
// carry the same tick column as the page's header.
func tickable(readOnly bool, id kube.KindID) bool {
	k, _ := kinds.Of(id)
	return !readOnly && kinds.Editable(id) && k.Candidates != nil
}

// addTicks gives page's rows their tick boxes when kind offers cleanup, and,
// when the user may delete that kind, sets where "Delete selected…" posts
// them (a POST to the cleanup preview, handlers/cleanup
// previewTickedCleanup). Without it the column stays, hidden (TickHeader).
func (h *Handlers) addTicks(c echo.Context, page *model.ListPage, id kube.KindID) {
	if page.Forbidden || !tickable(h.deps.ReadOnly, id) {
		return
	}
	if h.cleanupPages.MayDeleteAll(c, id) {
		page.TickAction = urls.Cleanup(id)
	}
	for i := range page.Rows {
		page.Rows[i] = handlerpage.WithTick(h.deps.Cluster, id, page.Rows[i])
	}
}

// addFlowSchemaTicks is addTicks for the FlowSchema list's own rows. That
// list is re-fetched on change (no shared live rows), so a user who may not
// delete gets no tick column at all, and no box values are looked up.
func (h *Handlers) addFlowSchemaTicks(c echo.Context, page *model.FlowSchemaListPage) {
	if page.List.Forbidden || !tickable(h.deps.ReadOnly, kube.FlowSchemas) || !h.cleanupPages.MayDeleteAll(c, kube.FlowSchemas) {
		return
	}
	page.List.TickAction = urls.Cleanup(kube.FlowSchemas)
	for i := range page.Rows {
		page.Rows[i].Tick = handlerpage.TickValue(h.deps.Cluster, kube.FlowSchemas, page.Rows[i].Name)
	}
}
