package flowschemas

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// addTicks is the generic list's tick boxes (handlers' list_ticks.go) for
// the overview's own rows. That list is re-fetched on change (no shared live
// rows), so a user who may not delete gets no tick column at all, and no box
// values are looked up.
func (h *Handlers) addTicks(c echo.Context, p *model.FlowSchemaListPage) {
	if p.List.Forbidden || !page.Tickable(h.d.ReadOnly, kube.FlowSchemas) || !h.d.Cleanup.MayDeleteAll(c, kube.FlowSchemas) {
		return
	}
	p.List.TickAction = urls.Cleanup(kube.FlowSchemas)
	for i := range p.Rows {
		p.Rows[i].Tick = page.TickValue(h.d.Cluster, kube.FlowSchemas, p.Rows[i].Name)
	}
}
