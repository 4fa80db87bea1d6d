// Package ledger is the auditor's views of the durable ledger (issue 29,
// internal/ledger, which this package imports under the same name): the
// ledger page with its filters (per user and per signer are the same page
// with a heading), one object's history whether or not it still exists (for
// a CSR: the request decoded, who decided and why, the certificate issued),
// and CSV and NDJSON exports streamed from the store.
//
// Every route is a GET: no route can edit or delete history, and the pages
// work under --read-only. Entries are limited to the kinds the viewer may
// list, asked per kind with the access check of every kind route; with
// --ledger-readers granted, only to users the API server allows get on
// clusterdesk.io/ledger (Deps.Refusal), refused with 403 on every route.
package ledger

import (
	"time"

	"github.com/labstack/echo/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// Cluster is what the ledger views read of the shared cache (ports.Cluster
// has it): the kinds, and whether an object exists now.
type Cluster interface {
	Statuses() []kube.KindStatus
	Meta(id kube.KindID, name string) (metav1.Object, error)
}

// Deps are the ledger views' ports.
type Deps struct {
	page.Base
	Cluster Cluster
	// Store is the ledger; nil: the console runs without one, and the pages
	// say how to turn it on.
	Store ledger.Store
	// MayList answers whether the request's user may list k (the access
	// check of every kind route, handlers/access.go).
	MayList func(c echo.Context, k kube.Kind) bool
	// Kind resolves the :kind parameter, or answers 404 (handlers/pages.go).
	Kind func(c echo.Context) (kube.Kind, error)
	// Timeout bounds the store's answer to one page (its Ping, Stats and
	// Query): a database that hangs makes the page say so, never hang.
	Timeout time.Duration
	// Exports bound the exports (zero fields: DefaultExportLimits).
	Exports ExportLimits
	// Refusal says why the request's user may not read the ledger at all
	// (--ledger-readers granted: the grant of get on clusterdesk.io/ledger,
	// asked as the user), "" when they may; nil refuses nobody. Every route
	// here and the policy's section ask it before any entry is read.
	Refusal page.LedgerRefusalFunc
}

// DefaultTimeout is Deps.Timeout when zero.
const DefaultTimeout = 5 * time.Second

// OffMessage is what the pages say when the console runs without a ledger.
const OffMessage = "This console runs with --ledger off, so it keeps no history: neither the changes it " +
	"observes nor anyone's writes. Start it with --ledger sqlite:<path> (embedded, the default) or --ledger " +
	"postgres://… (one ledger for every replica), and point the API server's audit webhook at it " +
	"(--audit-webhook-config-file of kube-apiserver); the README's ledger section says how."

// Handlers serves the ledger routes.
type Handlers struct {
	d       Deps
	stats   statsMemo
	exports *exportGate
}

// New builds the ledger views' handlers.
func New(d Deps) *Handlers {
	if d.Timeout <= 0 {
		d.Timeout = DefaultTimeout
	}
	return &Handlers{d: d, exports: newExportGate(d.Exports)}
}

// Register adds the ledger page, its exports, and one object's history
// behind ofKind (the :kind access check). GET only: history is read here,
// never written.
func (h *Handlers) Register(e *echo.Echo, ofKind echo.MiddlewareFunc) {
	granted := h.d.Refusal.Require // --ledger-readers granted (handlers/page/ledger_gate.go)
	e.GET(urls.Ledger, h.page, granted)
	e.GET(urls.LedgerCSV, h.exportCSV, granted)
	e.GET(urls.LedgerNDJSON, h.exportNDJSON, granted)
	e.GET(urls.LedgerObjectRoute, h.history, ofKind, granted)
	// The activity view's URLs (redirects.go).
	e.GET(urls.Activity, activityRedirect(urls.Activity))
	e.GET(urls.ActivityCSV, activityRedirect(urls.LedgerCSV))
	e.GET(urls.ActivityJSON, activityRedirect(urls.LedgerNDJSON))
	e.GET(urls.HistoryRoute, h.historyRedirect, ofKind)
}
