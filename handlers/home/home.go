// Package home is the console's home page: what needs attention (the
// attention section, whose live updates handlers/live renders with the same
// layout, handlers/page's attention.go), then each kind with its count.
package home

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// Deps are the home page's ports.
type Deps struct {
	page.Base
	// Rights is what the user may see of the shared cache: the kinds'
	// statuses, and whether they may read RBAC (the approver walk).
	Rights page.Rights
	// Lookup reads RBAC for the approver walk, bounded by LookupTimeout.
	Lookup        ports.Lookup
	LookupTimeout time.Duration
	// Queue is this server's CSR queue caches (their storm index).
	Queue *csrqueue.Queue
	// Attention is the sources of attention items, shared with the live
	// updates when there are any.
	Attention *page.AttentionState
	// Load is the live APF load as the user may see it (handlers/flowschemas'
	// Load), false when there is none.
	Load func(c echo.Context) (present.APFLoadState, bool)
}

// Handlers serves the home page.
type Handlers struct{ d Deps }

// New builds the home page's handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// Register adds the home page to e.
func (h *Handlers) Register(e *echo.Echo) { e.GET(urls.Home, h.home) }

// home says what needs attention (attention.go), then counts each kind.
func (h *Handlers) home(c echo.Context) error {
	p := model.HomePage{Chrome: h.d.Chrome(c, "Overview", "")}
	statuses := h.d.Rights.Statuses(c)
	p.Attention = h.attention(c, statuses, time.Now())
	if p.Chrome.Live.URL != "" {
		p.Chrome.Live.URL += "&attention=1" // its stream carries the section (handlers/live, attention.go)
	}
	for _, st := range statuses {
		if errors.Is(st.Err, kube.ErrNotServed) {
			// Not the cluster failing: the kind is absent (the policies' CRD
			// not installed, a kind newer than the API server), as its list
			// page says.
			p.Kinds = append(p.Kinds, present.KindNotServed(string(st.Kind.ID), st.Kind.Title, page.NotServed(st.Kind)))
			continue
		}
		p.Kinds = append(p.Kinds, present.KindSummary(string(st.Kind.ID), st.Kind.Title, string(st.State), st.Count, st.Err))
	}
	return page.Render(c, http.StatusOK, pages.Home(p))
}
