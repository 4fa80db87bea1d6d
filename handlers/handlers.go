package handlers

import (
	cleanuppages "github.com/clusterdesk/clusterdesk/handlers/cleanup"
	"github.com/clusterdesk/clusterdesk/handlers/csrs"
	"github.com/clusterdesk/clusterdesk/handlers/flowschemas"
	"github.com/clusterdesk/clusterdesk/handlers/insight"
	ledgerpages "github.com/clusterdesk/clusterdesk/handlers/ledger"
	"github.com/clusterdesk/clusterdesk/handlers/lists"
	liveupdates "github.com/clusterdesk/clusterdesk/handlers/live"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	replaypage "github.com/clusterdesk/clusterdesk/handlers/replay"
	whatifpage "github.com/clusterdesk/clusterdesk/handlers/whatif"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/writeaudit"
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
	// attention is the home page's sources of attention items (handlers/home).
	attention *page.AttentionState
	// rights is what the signed-in user may see and change of the shared
	// cache (handlers/page), asked by the access checks, the chrome and the
	// features.
	rights page.Rights
	// pageChrome builds every page's chrome (handlers/page), the features'
	// ChromeFunc.
	pageChrome *page.Chrome
	// replayJobs are the replays running in the background
	// (handlers/replay), whose progress the event stream carries to their
	// owners (replay_jobs.go).
	replayJobs *replaypage.Jobs
	// whatIfJobs are the APF what-ifs running in the background and
	// whatIfPages their page, which adds the backtest to priority levels'
	// pages (handlers/whatif).
	whatIfJobs  *whatifpage.Jobs
	whatIfPages *whatifpage.Handlers
	// ledgerPages are the ledger's views (handlers/ledger), which add what
	// each version of a CSR approval policy decided to the policy's page.
	ledgerPages *ledgerpages.Handlers
}

// attentionStateOf is the home page's sources of attention items: the live
// updates' when there are live updates (they render the same items), else a
// new one.
func attentionStateOf(deps Deps) *page.AttentionState {
	if deps.Live != nil {
		return deps.Live.Attention()
	}
	return page.NewAttentionState(deps.Cluster)
}
