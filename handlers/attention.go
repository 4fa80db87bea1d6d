package handlers

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

// attentionStateOf is the live updates' state when there are live updates
// (they render the same items), else a new one.
func attentionStateOf(deps Deps) *page.AttentionState {
	if deps.Live != nil {
		return deps.Live.Attention()
	}
	return page.NewAttentionState(deps.Cluster)
}

// homeAttention is the attention section of the signed-in user's home page.
func (h *Handlers) homeAttention(c echo.Context, statuses []kube.KindStatus, now time.Time) model.Attention {
	var load *apfload.Load
	seen := page.LoadUnknown
	if st, ok := h.flowSchemaPages.Load(c); ok {
		switch {
		case st.Forbidden:
			seen = page.LoadForbidden
		case st.Load != nil && st.Load.HasRates():
			load, seen = st.Load, page.LoadRead
		case st.Allowed:
			seen = page.LoadPending
		}
	}
	acc := page.AccessOf(statuses, seen == page.LoadRead || seen == page.LoadPending, h.mayReadRBAC(c))
	facts := attention.Facts{Load: load, Statuses: statuses, Now: now, Read: acc.May}
	if acc.May(kube.CSRs) {
		facts.Storms = h.queue.Storms()
	}
	if acc.RBAC {
		ctx, cancel := context.WithTimeout(c.Request().Context(), lookupTimeout)
		if err := h.attention.Walk.Refresh(ctx, now, h.deps.Lookup.ClusterRBAC); err != nil {
			h.deps.Log.Warn("attention: RBAC walk failed", "err", err)
		}
		cancel()
		facts.Gap = h.attention.Walk.GapFunc()
	}
	if load != nil {
		facts.Rejecting = attention.RejectingOf(*load)
	}
	return page.AttentionSection(acc, h.attention.Sources.Items(facts), seen)
}

// mayReadRBAC says whether the user may list ClusterRoles and
// ClusterRoleBindings (cached access reviews), and clusterdesk reads them.
func (h *Handlers) mayReadRBAC(c echo.Context) bool {
	if h.deps.Lookup == nil {
		return false
	}
	ctx := c.Request().Context()
	for _, r := range []string{"clusterroles", "clusterrolebindings"} {
		ok, err := h.deps.Access.Can(ctx, "list", "rbac.authorization.k8s.io", r, "", "")
		if err != nil || !ok {
			return false
		}
	}
	return true
}
