package page

import (
	"log/slog"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Rights answers what the signed-in user may see and change of what the
// shared cache holds, through the cached access reviews as the user: the
// route table's access checks, the page chrome and the features ask it. The
// handlers build one per server and hand its methods to the features.
type Rights struct {
	Access  ports.Access
	Cluster ports.Cluster
	// Lookup is the console's direct reads; nil: it reads no RBAC
	// (MayReadRBAC is false).
	Lookup   ports.Lookup
	Log      *slog.Logger
	ReadOnly bool
	// Local is local mode: the cache's identity is the user's.
	Local bool
	// LedgerReaders is who reads the ledger's data (ledger_gate.go);
	// "" is LedgerReadersListers.
	LedgerReaders LedgerReaders
}

// MayList checks the signed-in user's right to list a kind before anything
// is served from the shared cache (the handlers' kindAccess asks it for every
// kind route). An access review that fails (API server down) does not hide
// data the cache already holds: the cache's own forbidden state still applies.
func (r Rights) MayList(c echo.Context, k kube.Kind) bool {
	ok, err := r.Access.Can(c.Request().Context(), "list", k.Group, k.Resource, "", "")
	if err != nil {
		r.Log.Warn("access review failed", "kind", k.ID, "err", err)
		return r.ReviewFailureShowsCache()
	}
	return ok
}

// ReviewFailureShowsCache tells what a failed access review (API server
// down) means for reads from the shared cache. In local mode the cache's
// identity is the user's, so what it holds the user may see. In token and
// proxy mode the cache holds what the console may see, not the user: without
// an answer, nothing is shown.
func (r Rights) ReviewFailureShowsCache() bool { return r.Local }

// MayChange reports whether the signed-in user may update and delete the
// object (access reviews, cached): the detail page offers only those links.
// Read-only mode and a failed review offer neither; the server enforces
// regardless (read-only guard, the API server's RBAC).
func (r Rights) MayChange(c echo.Context, k kube.Kind, name string) (update, del bool) {
	if r.ReadOnly || r.Access == nil || !kinds.Editable(k.ID) {
		return false, false
	}
	ctx := c.Request().Context()
	can := func(verb string) bool {
		ok, err := r.Access.Can(ctx, verb, k.Group, k.Resource, "", name)
		if err != nil {
			r.Log.Warn("access review failed", "check", verb+" "+string(k.ID), "err", err)
		}
		return ok && err == nil
	}
	return can("update"), can("delete")
}

// Statuses is the cache's state of each kind as the signed-in user may see
// it: a kind the user may not list is forbidden to them, without its count,
// whatever the console's own identity may. In local mode the console's
// identity is the user's, so the cache's own states already say it. The
// kinds' questions are asked at once: a person's first page would otherwise
// wait for one access review after the other, a round trip per kind.
func (r Rights) Statuses(c echo.Context) []kube.KindStatus {
	all := r.Cluster.Statuses()
	if r.Local {
		return all
	}
	out := make([]kube.KindStatus, len(all))
	var wg sync.WaitGroup
	for i, st := range all {
		wg.Go(func() {
			if st.State != kube.StateForbidden && !r.MayList(c, st.Kind) {
				st.State, st.Count, st.Err = kube.StateForbidden, 0, nil
			}
			out[i] = st
		})
	}
	wg.Wait()
	return out
}

// MayReadRBAC says whether the user may list ClusterRoles and
// ClusterRoleBindings (cached access reviews), and clusterdesk reads them
// (the attention section's approver walk, ApproverWalk).
func (r Rights) MayReadRBAC(c echo.Context) bool {
	if r.Lookup == nil {
		return false
	}
	ctx := c.Request().Context()
	for _, res := range []string{"clusterroles", "clusterrolebindings"} {
		ok, err := r.Access.Can(ctx, "list", "rbac.authorization.k8s.io", res, "", "")
		if err != nil || !ok {
			return false
		}
	}
	return true
}
