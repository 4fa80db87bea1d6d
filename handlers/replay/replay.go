// Package replay is the page that replays the cluster's recorded writes
// against a draft of a ValidatingAdmissionPolicy and its binding (issue 45,
// internal/replay): before the draft is applied, who would it have stopped,
// warned or let through that the deployed version did not? The page changes
// nothing in the cluster; it reads the recorded writes, and as the signed-in
// user the namespaces, the params and which resources they may list. The
// recorded writes are the ledger's: with --ledger-readers granted only users
// granted get on clusterdesk.io/ledger replay (Deps.Refusal,
// handlers/page/ledger_gate.go).
package replay

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/jobs"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// Deps are the replay page's ports.
type Deps struct {
	page.Base
	// Cluster is the shared cache: the deployed policy and its bindings.
	Cluster ports.Cluster
	// Access answers, as the user, whether they may list a resource: the
	// replay leaves out the writes of every other resource.
	Access ports.Access
	// Lookup reads the namespaces and the params as the user; nil replays
	// without them (namespace selectors meet no labels, params are refused).
	Lookup ports.Lookup
	// Writes are the recorded writes; nil when the console records none
	// (no ledger, or no audit webhook): the page says so.
	Writes ledger.WriteStore
	// Jobs run the replays in the background (jobs.go), shared with the
	// event stream that reports their progress.
	Jobs *Jobs
	// Timeout bounds one replay job, the policy page's (DefaultTimeout
	// when 0).
	Timeout time.Duration
	// Refusal says why the user may not read the recorded writes at all
	// (--ledger-readers granted: they are the ledger's, every write's user
	// and object), "" when they may; nil refuses nobody. Every route, the
	// agreement section and the editor's replay ask it first.
	Refusal page.LedgerRefusalFunc
	// RequestTimeout bounds a replay that holds its request: the webhook
	// configurations' page and the policy page's agreement
	// (DefaultRequestTimeout when 0).
	RequestTimeout time.Duration
}

// DefaultTimeout bounds a replay job: past it the page says the window was
// too large rather than keep a core busy. 100,000 recorded writes replay in
// about 15 s on one core (BenchmarkReplay).
const DefaultTimeout = 2 * time.Minute

// DefaultRequestTimeout bounds a replay that answers within its request:
// a browser, a proxy or an Ingress would give up on a longer one.
const DefaultRequestTimeout = 30 * time.Second

// Handlers serves the replay page.
type Handlers struct{ d Deps }

// New builds the replay page's handlers.
func New(d Deps) *Handlers {
	if d.Timeout <= 0 {
		d.Timeout = DefaultTimeout
	}
	if d.RequestTimeout <= 0 {
		d.RequestTimeout = DefaultRequestTimeout
	}
	if d.Jobs == nil {
		d.Jobs = NewJobs(nil, jobs.Limits{}, d.Log)
	}
	return &Handlers{d: d}
}

// Register adds the page behind policies (the ValidatingAdmissionPolicies'
// access check). Its POSTs change nothing in the cluster (starting and
// cancelling a replay): readPOST marks them so in the route table
// (handlers/read_post.go); the CSRF guard applies as to every POST.
func (h *Handlers) Register(e *echo.Echo, policies echo.MiddlewareFunc, readPOST func(path string) string) {
	granted := h.d.Refusal.Require // --ledger-readers granted (handlers/page/ledger_gate.go)
	e.GET(urls.PolicyReplayRoute, h.form, policies, granted)
	e.POST(readPOST(urls.PolicyReplayRoute), h.replay, policies, granted)
	// The policy page's agreement with the API server (agreement.go): a
	// section, which says so itself when the user lacks the grant.
	newAgreement(h).register(e, policies)
	e.GET(urls.PolicyReplayJobRoute, h.job, policies, granted)
	e.POST(readPOST(urls.PolicyReplayCancelRoute), h.cancel, policies, granted)
}
