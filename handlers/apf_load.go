package handlers

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The live APF load and who may see it are handlers/flowschemas' (load.go);
// the kind registry and the live rows reach them from here.

// metricsShown reports whether the signed-in user sees what the API server's
// /metrics say (flowschemas' MetricsShown), for the load cells of live rows
// (handlers/live, built before handlers/flowschemas).
func (h *Handlers) metricsShown(ctx context.Context) (shown bool, err error) {
	return h.flowSchemaPages.MetricsShown(ctx)
}

// apfDetailLoad is the detail metrics of FlowSchemas and priority levels in
// the root's kind hooks (kind_hooks.go): the live load first among the sections.
func apfDetailLoad(h *Handlers, c echo.Context, id kube.KindID, name string, page *model.DetailPage) {
	h.flowSchemaPages.AddDetailLoad(c, id, name, page)
}

// addPriorityLevelListLoad adds the load columns to the priority level list,
// and the banner saying where they come from (or why they are missing). It
// decorates the full list and the one-row lists of live updates alike
// (handlers/live, Updates.Render), so a live row has the cells of the page's row.
func addPriorityLevelListLoad(_ Cluster, _ kube.KindID, page *model.ListPage, st present.APFLoadState) {
	page.Chrome.Banners = append(page.Chrome.Banners, st.LoadBanner())
	if st.Allowed {
		present.AddPriorityLevelLoad(page, st.Load)
		page.LoadFollow = st.Follow
	}
}
