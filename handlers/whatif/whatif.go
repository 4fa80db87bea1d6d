// Package whatif is the APF what-if page (issue 46, internal/whatif): a
// draft of FlowSchemas and priority levels replayed over the recorded
// traffic beside the current configuration, run as a background job with
// its progress on the page's event stream (as handlers/replay's policy
// replay); with no draft, the backtest, whose latest result a priority
// level's page shows (backtest.go). It changes nothing in the cluster: the
// draft's objects are checked by the API server in a dry run as the user,
// and the current configuration is the shared cache's, shown only to a
// user who may list both FlowSchemas and priority levels (the routes'
// access checks). The recorded traffic names who sent what: with
// --ledger-readers granted only users granted get on clusterdesk.io/ledger
// run it (Deps.Refusal, handlers/page/ledger_gate.go).
package whatif

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/jobs"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// Deps are the what-if page's ports.
type Deps struct {
	page.Base
	// Cluster is the shared cache: the current FlowSchemas and levels.
	Cluster ports.Cluster
	// Editor dry-runs the draft's objects as the user, so that the API
	// server's own validation speaks; nil refuses every draft.
	Editor ports.ObjectEditor
	// Traffic is the recorded traffic; nil when the console records none
	// (no ledger, or no audit webhook): the page says so.
	Traffic ledger.TrafficStore
	// APFLoad is the live load sampler, whose per-instance nominal limits
	// tell each instance's server concurrency limit (servercl.go); nil:
	// whatif.DefaultServerCL.
	APFLoad ports.APFLoad
	// MayList asks the API server whether the user may list k (the
	// priority level page's backtest section).
	MayList func(c echo.Context, k kube.Kind) bool
	// Refusal says why the user may not read the recorded traffic at all
	// (--ledger-readers granted: it is the ledger's, who sent which
	// requests how often), "" when they may; nil refuses nobody. Every
	// route and the backtest section ask it first.
	Refusal page.LedgerRefusalFunc
	// Jobs run the what-ifs, shared with the event stream.
	Jobs *Jobs
	// Timeout bounds one run (DefaultTimeout when 0).
	Timeout time.Duration
}

// DefaultTimeout bounds a what-if run: past it the page says the window
// was too large rather than keep two cores busy.
const DefaultTimeout = 3 * time.Minute

// Handlers serves the what-if page.
type Handlers struct {
	d        Deps
	backtest *backtests
}

// New builds the what-if page's handlers.
func New(d Deps) *Handlers {
	if d.Timeout <= 0 {
		d.Timeout = DefaultTimeout
	}
	if d.Jobs == nil {
		d.Jobs = NewJobs(nil, jobs.Limits{}, d.Log)
	}
	return &Handlers{d: d, backtest: &backtests{}}
}

// Register adds the page behind access (the FlowSchemas' and the priority
// levels' list checks, both: the run shows how the traffic classifies
// under both). Its POSTs change nothing in the cluster: readPOST marks
// them so (handlers/read_post.go); the CSRF guard applies as to every POST.
func (h *Handlers) Register(e *echo.Echo, readPOST func(path string) string, access ...echo.MiddlewareFunc) {
	access = append(access, h.d.Refusal.Require) // --ledger-readers granted (handlers/page/ledger_gate.go)
	e.GET(urls.WhatIf, h.form, access...)
	e.POST(readPOST(urls.WhatIf), h.run, access...)
	e.POST(readPOST(urls.WhatIfBacktest), h.runBacktest, access...)
	e.GET(urls.WhatIfJobRoute, h.job, access...)
	e.POST(readPOST(urls.WhatIfCancelRoute), h.cancel, access...)
}
