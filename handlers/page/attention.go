package page

import (
	"slices"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/attention"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The home page's attention section (internal/attention), shared by the
// page (handlers' attention.go) and its live updates (handlers/live): both
// read the same sources and lay the section out here, so a tab shows the
// same section before and after a change.

// AttentionState is one server's sources of the items, shared by the home
// page and its live updates: findings kept per change (Sources) and the
// last RBAC walk (Walk).
type AttentionState struct {
	Sources *attention.Sources
	Walk    *ApproverWalk
}

// NewAttentionState builds the sources over the shared cache.
func NewAttentionState(cl ports.Cluster) *AttentionState {
	return &AttentionState{Sources: attention.NewSources(cl, time.Now), Walk: &ApproverWalk{}}
}

// AttentionAccess is what decides which items a user sees: the kinds they
// may list, whether they see the API server's load (get /metrics), and
// whether they may read who approves a signer (list ClusterRoles and
// ClusterRoleBindings). Tabs of the same access share one live rendering.
type AttentionAccess struct {
	Kinds []kube.KindID // sorted
	Load  bool
	RBAC  bool
}

// May reports whether the access lists kind k.
func (a AttentionAccess) May(k kube.KindID) bool { _, ok := slices.BinarySearch(a.Kinds, k); return ok }

// Key names the access: equal accesses have equal keys.
func (a AttentionAccess) Key() string {
	var b strings.Builder
	for _, k := range a.Kinds {
		b.WriteString(string(k) + ",")
	}
	if a.Load {
		b.WriteString("+load")
	}
	if a.RBAC {
		b.WriteString("+rbac")
	}
	return b.String()
}

// AccessOf is the user's access from their statuses (a kind they may not
// list is forbidden) and the two checks.
func AccessOf(statuses []kube.KindStatus, load, rbac bool) AttentionAccess {
	a := AttentionAccess{Load: load, RBAC: rbac}
	for _, st := range statuses {
		if st.State != kube.StateForbidden {
			a.Kinds = append(a.Kinds, st.Kind.ID)
		}
	}
	slices.Sort(a.Kinds)
	a.RBAC = rbac && a.May(kube.CSRs)
	return a
}

// Notes of what the items leave out.
const (
	noteLoadForbidden = "Your identity may not read the API server's /metrics, so webhook health and priority levels rejecting requests are not shown."
	noteLoadPending   = "clusterdesk is reading the API server's metrics: webhook health and priority levels rejecting requests show after its second read."
	noteNoRBAC        = "Signers nothing approves are not shown: who may approve is read from the ClusterRoles and ClusterRoleBindings, which you may not list (or clusterdesk runs without direct reads)."
)

// LoadSeen is what the console knows of the API server's load for a section.
type LoadSeen int

const (
	LoadUnknown   LoadSeen = iota // no sampler, or the access review failed: nothing to say
	LoadForbidden                 // the user may not get /metrics
	LoadPending                   // allowed, the sampler has no rates yet
	LoadRead                      // allowed, with rates
)

// AttentionSection is the section of one access, from items computed for
// it or for several accesses at once (the live updates compute them once per
// batch for every open access): the home page and its live updates both lay
// it out here, so a tab shows the same section before and after a change.
// What the access may not see is left out: kinds it may not list, what the
// load says when it may not read /metrics, signers nothing approves when it
// may not read who approves.
func AttentionSection(acc AttentionAccess, items []attention.Item, load LoadSeen) model.Attention {
	var notes []string
	switch load {
	case LoadForbidden:
		notes = append(notes, noteLoadForbidden)
	case LoadPending:
		notes = append(notes, noteLoadPending)
	}
	if acc.May(kube.CSRs) && !acc.RBAC {
		notes = append(notes, noteNoRBAC)
	}
	vis := attention.Visible(items, acc.May)
	if !acc.Load { // a user who may not read /metrics sees nothing it measured
		vis = dropLoadItems(vis)
	}
	if !acc.RBAC {
		vis = dropConcern(vis, attention.UnapprovedSigners)
	}
	return present.Attention(vis, notes)
}

func dropLoadItems(items []attention.Item) []attention.Item {
	return dropConcern(dropConcern(items, attention.WebhooksFailing), attention.LevelsRejecting)
}

func dropConcern(items []attention.Item, c attention.Concern) []attention.Item {
	out := items[:0:0]
	for _, it := range items {
		if it.Concern != c {
			out = append(out, it)
		}
	}
	return out
}
