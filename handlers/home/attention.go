package home

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/attention"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The home page's attention items (internal/attention): computed from the
// caches (the CSR queue's storm index, findings kept per change of CRDs and
// webhook configurations, the kinds' statuses), the shared APF sampler and
// one RBAC walk per 30 s (page.ApproverWalk), never a walk of every object
// per view. The section's layout, which the live updates share, is
// handlers/page's (attention.go).

// attention is the attention section of the signed-in user's home page.
func (h *Handlers) attention(c echo.Context, statuses []kube.KindStatus, now time.Time) model.Attention {
	var load *apfload.Load
	seen := page.LoadUnknown
	if st, ok := h.d.Load(c); ok {
		switch {
		case st.Forbidden:
			seen = page.LoadForbidden
		case st.Load != nil && st.Load.HasRates():
			load, seen = st.Load, page.LoadRead
		case st.Allowed:
			seen = page.LoadPending
		}
	}
	acc := page.AccessOf(statuses, seen == page.LoadRead || seen == page.LoadPending, h.d.Rights.MayReadRBAC(c))
	facts := attention.Facts{Load: load, Statuses: statuses, Now: now, Read: acc.May}
	if acc.May(kube.CSRs) {
		facts.Storms = h.d.Queue.Storms()
	}
	if acc.RBAC {
		ctx, cancel := context.WithTimeout(c.Request().Context(), h.d.LookupTimeout)
		if err := h.d.Attention.Walk.Refresh(ctx, now, h.d.Lookup.ClusterRBAC); err != nil {
			h.d.Log.Warn("attention: RBAC walk failed", "err", err)
		}
		cancel()
		facts.Gap = h.d.Attention.Walk.GapFunc()
	}
	if load != nil {
		facts.Rejecting = attention.RejectingOf(*load)
	}
	return page.AttentionSection(acc, h.d.Attention.Sources.Items(facts), seen)
}
