package handlers

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	cleanuppages "github.com/clusterdesk/clusterdesk/handlers/cleanup"
	"github.com/clusterdesk/clusterdesk/handlers/csrs"
	"github.com/clusterdesk/clusterdesk/handlers/flowschemas"
	"github.com/clusterdesk/clusterdesk/handlers/insight"
	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/handlers/lists"
	liveupdates "github.com/clusterdesk/clusterdesk/handlers/live"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	handlerpage "github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/writeaudit"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// Handlers serves the pages.
type Handlers struct {
	deps Deps
	gate *auth.Gate     // who a request is (identity.go)
	csrf *auth.Sessions // whose key binds CSRF tokens (csrf.go)
	// queue is this server's CSR queue caches (csr_queue.go: csrQueueOf).
	queue *csrqueue.Queue
	// trail records the writes of every feature (internal/writeaudit).
	trail *writeaudit.Trail
	// flash carries a write's result to the page it redirects to (handlers/page).
	flash page.Flash
	// csrPages is the CSR approval workflow (handlers/csrs), whose request
	// page the kind registry serves as the CSRs' detail page (csrDetail).
	csrPages *csrs.Handlers
	// flowSchemaPages is the FlowSchema pages and the live APF load
	// (handlers/flowschemas), which lists and detail pages read.
	flowSchemaPages *flowschemas.Handlers
	// insightPages is the insight pages (handlers/insight), which also build
	// the detail pages with direct lookups (kind_hooks.go).
	insightPages *insight.Handlers
	// cleanupPages is the cleanup (handlers/cleanup), whose links and tick
	// boxes' action the lists carry.
	cleanupPages *cleanuppages.Handlers
	// listPages is the generic list and detail pages (handlers/lists),
	// whose detail page the FlowSchema overview also serves.
	listPages *lists.Handlers
	// live is the live updates (handlers/live): the pages' live settings.
	live *liveupdates.Handlers
	// attention is the home page's sources of attention items (attention.go).
	attention *handlerpage.AttentionState
}

// home says what needs attention (attention.go), then counts each kind.
func (h *Handlers) home(c echo.Context) error {
	p := model.HomePage{Chrome: h.chrome(c, "Overview", "")}
	statuses := h.statuses(c)
	p.Attention = h.homeAttention(c, statuses, time.Now())
	if p.Chrome.Live.URL != "" {
		p.Chrome.Live.URL += "&attention=1" // its stream carries the section (handlers/live, attention.go)
	}
	for _, st := range statuses {
		if errors.Is(st.Err, kube.ErrNotServed) {
			// Not the cluster failing: the kind is absent (the policies' CRD
			// not installed, a kind newer than the API server), as its list
			// page says.
			p.Kinds = append(p.Kinds, present.KindNotServed(string(st.Kind.ID), st.Kind.Title, handlerpage.NotServed(st.Kind)))
			continue
		}
		p.Kinds = append(p.Kinds, present.KindSummary(string(st.Kind.ID), st.Kind.Title, string(st.State), st.Count, st.Err))
	}
	return render(c, http.StatusOK, pages.Home(p))
}

// kindFor resolves the :kind path segment, or answers 404 (handlers/page).
func (h *Handlers) kindFor(c echo.Context) (kube.Kind, kinds.Kind, error) {
	return handlerpage.KindFor(c, h.deps.Cluster)
}

// mayList checks the signed-in user's right to list a kind before anything is
// served from the shared cache (kindAccess asks it for every kind route). An access review that fails (API server down)
// does not hide data the cache already holds: the cache's own forbidden state
// still applies.
func (h *Handlers) mayList(c echo.Context, k kube.Kind) bool {
	ok, err := h.deps.Access.Can(c.Request().Context(), "list", k.Group, k.Resource, "", "")
	if err != nil {
		h.deps.Log.Warn("access review failed", "kind", k.ID, "err", err)
		return h.reviewFailureShowsCache()
	}
	return ok
}
