package handlers

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	approverspage "github.com/clusterdesk/clusterdesk/handlers/approvers"
	cleanuppages "github.com/clusterdesk/clusterdesk/handlers/cleanup"
	"github.com/clusterdesk/clusterdesk/handlers/csrpolicies"
	"github.com/clusterdesk/clusterdesk/handlers/csrs"
	editorpages "github.com/clusterdesk/clusterdesk/handlers/editor"
	"github.com/clusterdesk/clusterdesk/handlers/flowschemas"
	"github.com/clusterdesk/clusterdesk/handlers/health"
	"github.com/clusterdesk/clusterdesk/handlers/home"
	"github.com/clusterdesk/clusterdesk/handlers/insight"
	ledgerpages "github.com/clusterdesk/clusterdesk/handlers/ledger"
	"github.com/clusterdesk/clusterdesk/handlers/lists"
	liveupdates "github.com/clusterdesk/clusterdesk/handlers/live"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	replaypage "github.com/clusterdesk/clusterdesk/handlers/replay"
	"github.com/clusterdesk/clusterdesk/handlers/search"
	"github.com/clusterdesk/clusterdesk/handlers/signin"
	whatifpage "github.com/clusterdesk/clusterdesk/handlers/whatif"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// The feature packages under handlers/ take their ports from here; routes.go
// calls their Register where their routes belong in the table.

// base is what every feature shares: the page chrome and the log.
func (h *Handlers) base() page.Base {
	return page.Base{Log: h.deps.Log, Chrome: h.pageChrome.Build, MarkLive: h.live.MarkLive}
}

// cleanupFeature is the cleanup's handlers (handlers/cleanup).
func cleanupFeature(h *Handlers) *cleanuppages.Handlers {
	return cleanuppages.New(cleanuppages.Deps{
		Base:          h.base(),
		Cluster:       h.deps.Cluster,
		Access:        h.deps.Access,
		ReadOnly:      h.deps.ReadOnly,
		Editor:        h.deps.Editor,
		Audit:         h.trail,
		ProgressAfter: h.deps.CleanupProgressAfter,
	})
}

// signInFeature is the sign-in and sign-out pages and the sign-in limit
// (handlers/signin).
func signInFeature(h *Handlers) *signin.Handlers {
	d := signin.Deps{
		Log: h.deps.Log, Gate: h.gate, Sessions: h.deps.Sessions, Logins: h.deps.Logins, User: h.deps.User,
		TokenReview: h.deps.TokenReview, Users: h.deps.Users, PreSessionToken: h.preSessionToken,
		Limit: h.deps.SignInLimit,
	}
	if h.deps.Live != nil {
		d.EndStreams = h.live.EndSessionStreams
	}
	return signin.New(d)
}

// liveFeature is the live updates: the event stream, the pages' live
// settings and the end of a signed-out session's streams (handlers/live).
// Its renderer is main's (Deps.Live, NewLiveUpdates), nil without live updates.
func liveFeature(h *Handlers) *liveupdates.Handlers {
	return liveupdates.New(liveupdates.Deps{
		Base:    page.Base{Log: h.deps.Log, Chrome: h.pageChrome.Build},
		Cluster: h.deps.Cluster, Access: h.deps.Access, Updates: h.deps.Live,
		Gate: h.gate, Sessions: h.deps.Sessions, JobTopic: h.jobTopic,
		MayList: h.rights.MayList, ReviewFailureShowsCache: h.rights.ReviewFailureShowsCache,
		MetricsShown: func(ctx context.Context) (bool, error) {
			// Who may see the load is handlers/flowschemas' (load.go),
			// built after the live updates, whose settings its pages carry.
			return h.flowSchemaPages.MetricsShown(ctx)
		},
		MayReadRBAC: h.rights.MayReadRBAC,
	})
}

// lookupTimeout bounds the direct lookups of one page view: a slow API server
// makes the page say "not checked", never hang.
const lookupTimeout = 5 * time.Second

// insightFeature is the schema explorer, the interception simulator and the
// detail pages with direct lookups (handlers/insight).
func insightFeature(h *Handlers) *insight.Handlers {
	return insight.New(insight.Deps{
		Base: h.base(), Cluster: h.deps.Cluster, Lookup: h.deps.Lookup, Editor: h.deps.Editor, LookupTimeout: lookupTimeout,
		MayList: h.rights.MayList,
	})
}

// replayFeature replays the recorded writes against a draft admission
// policy (handlers/replay, issue 45). The ledger's SQL store keeps the
// recorded writes; none without a ledger (the page says so).
func replayFeature(h *Handlers) *replaypage.Handlers {
	writes, _ := h.deps.Ledger.(ledger.WriteStore)
	return replaypage.New(replaypage.Deps{Base: h.base(), Cluster: h.deps.Cluster, Access: h.deps.Access, Lookup: h.deps.Lookup, Writes: writes,
		Jobs: h.replayJobs, Refusal: h.rights.LedgerRefusal})
}

// whatIfFeature is the APF what-if on the recorded traffic (handlers/whatif,
// issue 46): the ledger's SQL store keeps the traffic; none without a
// ledger (the page says so).
func whatIfFeature(h *Handlers) *whatifpage.Handlers {
	traffic, _ := h.deps.Ledger.(ledger.TrafficStore)
	return whatifpage.New(whatifpage.Deps{Base: h.base(), Cluster: h.deps.Cluster, Editor: h.deps.Editor, Traffic: traffic,
		APFLoad: h.deps.APFLoad, MayList: h.rights.MayList, Jobs: h.whatIfJobs, Refusal: h.rights.LedgerRefusal})
}

// approversFeature is "who approves this signer?" (handlers/approvers).
func approversFeature(h *Handlers) *approverspage.Handlers {
	return approverspage.New(approverspage.Deps{
		Base: h.base(), Cluster: h.deps.Cluster, Lookup: h.deps.Lookup, LookupTimeout: lookupTimeout,
		Policies: h.policies(), Access: h.deps.Access,
	})
}

// csrPoliciesFeature is the CSR page's approval policies panel (handlers/csrpolicies).
func csrPoliciesFeature(h *Handlers) *csrpolicies.Handlers {
	return csrpolicies.New(csrpolicies.Deps{
		Base: h.base(), Cluster: h.deps.Cluster, Lookup: h.deps.Lookup, LookupTimeout: lookupTimeout,
		Policies: h.policies(), Access: h.deps.Access,
	})
}

// homeFeature is the home page: what needs attention, then each kind
// (handlers/home).
func homeFeature(h *Handlers) *home.Handlers {
	return home.New(home.Deps{
		Base: h.base(), Rights: h.rights, Lookup: h.deps.Lookup, LookupTimeout: lookupTimeout,
		Queue: h.queue, Attention: h.attention, Load: h.flowSchemaPages.Load,
	})
}

// healthFeature is the probes (handlers/health).
func healthFeature(h *Handlers) *health.Handlers {
	return health.New(health.Deps{Cluster: h.deps.Cluster, Gate: h.gate, Ledger: h.deps.Ledger, Log: h.deps.Log})
}

// searchFeature is the search by name across kinds (handlers/search).
func searchFeature(h *Handlers) *search.Handlers {
	return search.New(search.Deps{
		Base: h.base(), Cluster: h.deps.Cluster, MayList: h.rights.MayList,
	})
}

// ledgerFeature is the auditor's views of the durable ledger (handlers/ledger).
func ledgerFeature(h *Handlers) *ledgerpages.Handlers {
	return ledgerpages.New(ledgerpages.Deps{
		Base: h.base(), Cluster: h.deps.Cluster, Store: h.deps.Ledger, MayList: h.rights.MayList, Timeout: lookupTimeout,
		Refusal: h.rights.LedgerRefusal,
		Exports: h.deps.LedgerExports,
		Kind: func(c echo.Context) (kube.Kind, error) {
			k, _, err := page.KindFor(c, h.deps.Cluster)
			return k, err
		},
	})
}

// csrsFeature is the CSR approval workflow: the queue with its bulk and group
// decisions, and one request's page with its decision and certificate upload
// (handlers/csrs).
func csrsFeature(h *Handlers) *csrs.Handlers {
	return csrs.New(csrs.Deps{
		Base: h.base(), Cluster: h.deps.Cluster, Queue: h.queue, Cleanup: h.cleanupPages, MayChange: h.rights.MayChange,
		Writer: h.deps.Writer, Access: h.deps.Access, Issuer: h.deps.Issuer, Lookup: h.deps.Lookup,
		Audit: h.trail, Flash: h.flash, Console: h.deps.User, ReadOnly: h.deps.ReadOnly,
	})
}

// csrDetail is the CSRs' detail page in the root's kind hooks (kind_hooks.go): the
// request's own page (handlers/csrs), built once by New.
func csrDetail(h *Handlers, c echo.Context) error { return h.csrPages.Detail(c) }

// listsFeature is the generic list and detail pages of every kind
// (handlers/lists), with what the root adds to a few kinds (kind_hooks.go).
func listsFeature(h *Handlers) *lists.Handlers {
	return lists.New(lists.Deps{
		Base: h.base(), Cluster: h.deps.Cluster, Access: h.deps.Access, ReadOnly: h.deps.ReadOnly,
		Cleanup: h.cleanupPages, MayChange: h.rights.MayChange, Hooks: h.listHooks,
	})
}

// flowSchemasFeature is the FlowSchema overview, the classifier and the
// structured FlowSchema form (handlers/flowschemas).
func flowSchemasFeature(h *Handlers) *flowschemas.Handlers {
	return flowschemas.New(flowschemas.Deps{
		Base: h.base(), Cluster: h.deps.Cluster, Access: h.deps.Access, ReadOnly: h.deps.ReadOnly,
		MayList: h.rights.MayList, Cleanup: h.cleanupPages, Detail: h.listPages.Detail,
		Editor: h.deps.Editor, Audit: h.trail, Flash: h.flash,
		APFLoad: h.deps.APFLoad, URLAccess: h.deps.URLAccess,
	})
}

// editorFeature is the YAML editor, its delete confirmation and the pages of
// a CRD's custom resources (handlers/editor).
// replay replays the editor's text before it is applied (handlers/replay).
func editorFeature(h *Handlers, replay *replaypage.Handlers) *editorpages.Handlers {
	return editorpages.New(editorpages.Deps{
		Base: h.base(), Cluster: h.deps.Cluster, Editor: h.deps.Editor, Docs: h.deps.Docs, ReadOnly: h.deps.ReadOnly,
		Audit: h.trail, Flash: h.flash, Cleanup: h.cleanupPages, Access: h.deps.Access, Replay: replay,
	})
}

// policies are the compiled CSR approval policies of Deps.Policies, through
// the queue (which shares them); nil without.
func (h *Handlers) policies() func() *csrpolicy.Compiled {
	if h.deps.Policies == nil {
		return nil
	}
	return h.deps.Policies.Current
}
