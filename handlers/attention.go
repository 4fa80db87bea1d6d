package handlers

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/attention"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The home page's attention items (internal/attention): computed from the
// caches (the CSR queue's storm index, findings kept per change of CRDs and
// webhook configurations, the kinds' statuses), the shared APF sampler and
// one RBAC walk per approverWalkKept, never a walk of every object per view.

// attentionState is one server's sources of the items, shared by the home
// page and its live updates.
type attentionState struct {
	sources *attention.Sources
	walk    *approverWalk
}

func newAttentionState(cl Cluster) *attentionState {
	return &attentionState{sources: attention.NewSources(cl, time.Now), walk: &approverWalk{}}
}

// attentionStateOf is the live updates' state when there are live updates
// (they render the same items), else a new one.
func attentionStateOf(deps Deps) *attentionState {
	if deps.Live != nil {
		return deps.Live.attention
	}
	return newAttentionState(deps.Cluster)
}

// attentionAccess is what decides which items a user sees: the kinds they
// may list, whether they see the API server's load (get /metrics), and
// whether they may read who approves a signer (list ClusterRoles and
// ClusterRoleBindings). Tabs of the same access share one live rendering.
type attentionAccess struct {
	kinds []kube.KindID // sorted
	load  bool
	rbac  bool
}

func (a attentionAccess) may(k kube.KindID) bool { _, ok := slices.BinarySearch(a.kinds, k); return ok }

func (a attentionAccess) key() string {
	var b strings.Builder
	for _, k := range a.kinds {
		b.WriteString(string(k) + ",")
	}
	if a.load {
		b.WriteString("+load")
	}
	if a.rbac {
		b.WriteString("+rbac")
	}
	return b.String()
}

// accessOf is the user's access from their statuses (h.statuses: a kind they
// may not list is forbidden) and the two checks.
func accessOf(statuses []kube.KindStatus, load, rbac bool) attentionAccess {
	a := attentionAccess{load: load, rbac: rbac}
	for _, st := range statuses {
		if st.State != kube.StateForbidden {
			a.kinds = append(a.kinds, st.Kind.ID)
		}
	}
	slices.Sort(a.kinds)
	a.rbac = rbac && a.may(kube.CSRs)
	return a
}

// Notes of what the items leave out.
const (
	noteLoadForbidden = "Your identity may not read the API server's /metrics, so webhook health and priority levels rejecting requests are not shown."
	noteLoadPending   = "clusterdesk is reading the API server's metrics: webhook health and priority levels rejecting requests show after its second read."
	noteNoRBAC        = "Signers nothing approves are not shown: who may approve is read from the ClusterRoles and ClusterRoleBindings, which you may not list (or clusterdesk runs without direct reads)."
)

// homeAttention is the attention section of the signed-in user's home page.
func (h *Handlers) homeAttention(c echo.Context, statuses []kube.KindStatus, now time.Time) model.Attention {
	var load *apfload.Load
	seen := loadUnknown
	if st, ok := h.flowSchemaPages.Load(c); ok {
		switch {
		case st.Forbidden:
			seen = loadForbidden
		case st.Load != nil && st.Load.HasRates():
			load, seen = st.Load, loadRead
		case st.Allowed:
			seen = loadPending
		}
	}
	acc := accessOf(statuses, seen == loadRead || seen == loadPending, h.mayReadRBAC(c))
	facts := attention.Facts{Load: load, Statuses: statuses, Now: now, Read: acc.may}
	if acc.may(kube.CSRs) {
		facts.Storms = h.queue.Storms()
	}
	if acc.rbac {
		ctx, cancel := context.WithTimeout(c.Request().Context(), lookupTimeout)
		if err := h.attention.walk.refresh(ctx, now, h.deps.Lookup.ClusterRBAC); err != nil {
			h.deps.Log.Warn("attention: RBAC walk failed", "err", err)
		}
		cancel()
		facts.Gap = h.attention.walk.gapFunc()
	}
	if load != nil {
		facts.Rejecting = attention.RejectingOf(*load)
	}
	return attentionSectionOf(acc, h.attention.sources.Items(facts), seen)
}

// loadSeen is what the console knows of the API server's load for a section.
type loadSeen int

const (
	loadUnknown   loadSeen = iota // no sampler, or the access review failed: nothing to say
	loadForbidden                 // the user may not get /metrics
	loadPending                   // allowed, the sampler has no rates yet
	loadRead                      // allowed, with rates
)

// attentionSectionOf is the section of one access, from items computed for
// it or for several accesses at once (the live updates compute them once per
// batch for every open access): the home page and its live updates both lay
// it out here, so a tab shows the same section before and after a change.
// What the access may not see is left out: kinds it may not list, what the
// load says when it may not read /metrics, signers nothing approves when it
// may not read who approves.
func attentionSectionOf(acc attentionAccess, items []attention.Item, load loadSeen) model.Attention {
	var notes []string
	switch load {
	case loadForbidden:
		notes = append(notes, noteLoadForbidden)
	case loadPending:
		notes = append(notes, noteLoadPending)
	}
	if acc.may(kube.CSRs) && !acc.rbac {
		notes = append(notes, noteNoRBAC)
	}
	vis := attention.Visible(items, acc.may)
	if !acc.load { // a user who may not read /metrics sees nothing it measured
		vis = dropLoadItems(vis)
	}
	if !acc.rbac {
		vis = dropConcern(vis, attention.UnapprovedSigners)
	}
	return present.Attention(vis, notes)
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
