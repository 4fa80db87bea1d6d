package flowschemas

import (
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// What the live APF load (load.go) adds to other kinds' lists: the load
// columns of priority levels, and the health of webhooks
// (webhook_health.go). The handlers' kind hooks put them on those kinds'
// lists and detail pages, and on their live rows.

// PriorityLevelListLoad adds the load columns to the priority level list,
// and the banner saying where they come from (or why they are missing). It
// decorates the full list and the one-row lists of live updates alike
// (handlers/live, Updates.Render), so a live row has the cells of the page's row.
func PriorityLevelListLoad(_ ports.Cluster, _ kube.KindID, page *model.ListPage, st present.APFLoadState) {
	page.Chrome.Banners = append(page.Chrome.Banners, st.LoadBanner())
	if st.Allowed {
		present.AddPriorityLevelLoad(page, st.Load)
		page.LoadFollow = st.Follow
	}
}
