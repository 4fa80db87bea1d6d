// Package live is the live updates' handlers: the event stream (GET /events,
// events.go), the renderer that turns a batch of changes into messages once
// for every browser (Updates, render.go: counts, stale banners, list rows),
// the CSR queue's open views (csr_views.go) and rows (csr.go), the home
// page's attention sections (attention.go), the pages' live settings
// (Chrome), and the end of a signed-out session's streams (signout.go). The
// hub and the streams (coalescing, history, limits, the SSE protocol) are
// internal/live, which this package imports under the same name.
package live

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// Kinds is what live rows read of the kind registry, which the handlers
// package builds (kinds.go): a row rendered here is exactly the row the
// kind's list shows.
type Kinds interface {
	// Row renders one object's list row as the kind's list does; found is
	// false for an object that no longer exists, err set for a kind without
	// rows or a cache that cannot say.
	Row(kind kube.KindID, name string, now time.Time) (row model.Row, found bool, err error)
	// OwnRows reports a kind whose list is a page of its own with rows of
	// its own instead of the generic list's: the CSR queue, whose rows this
	// package renders from the queue's index (csr.go).
	OwnRows(kind kube.KindID) bool
	// Tickable reports whether kind's list rows carry cleanup tick boxes
	// when the console writes (Updates.ReadOnly turns them off).
	Tickable(kind kube.KindID) bool
	// Metrics decorates a row of kind with the load cells its list shows
	// to users who may read /metrics; nil when its list shows none.
	Metrics(kind kube.KindID) func(row model.Row, st present.APFLoadState) model.Row
}

// Deps are the live updates' ports.
type Deps struct {
	page.Base
	Cluster ports.Cluster
	Access  ports.Access
	// Updates renders and serves the streams; nil turns live updates off
	// (GET /events answers 503, pages get no live settings).
	Updates *Updates
	// Gate is who each request is (its mode words the refusals, its
	// revocations end streams); Sessions their idle and absolute limits.
	Gate     *auth.Gate
	Sessions *auth.Sessions
	// MayList is the pages' check of the user's right to list a kind
	// (handlers' access.go); ReviewFailureShowsCache what a failed access
	// review means for reads from the shared cache (handlers' identity.go).
	MayList                 func(c echo.Context, k kube.Kind) bool
	ReviewFailureShowsCache func() bool
	// MetricsShown reports whether the user sees what the API server's
	// /metrics say (handlers/flowschemas), for load cells and attention.
	MetricsShown func(ctx context.Context) (bool, error)
	// MayReadRBAC reports whether the user may read who approves a signer
	// (handlers' attention.go), for a home tab's attention section.
	MayReadRBAC func(c echo.Context) bool
	// JobTopic is the topic of the background job id (a replay) when it is
	// the signed-in user's (jobs.go); nil serves no job's updates.
	JobTopic func(c echo.Context, id string) (topic string, ok bool)
}

// Handlers serves the event stream and the pages' live settings.
type Handlers struct{ d Deps }

// New builds the live updates' handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// Register adds the event stream, one per tab. No gzip or timeout
// middleware may wrap it: routes.go registers it on the echo itself.
func (h *Handlers) Register(e *echo.Echo) {
	e.GET(urls.Events, h.events)
}
