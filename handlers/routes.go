package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	editorpages "github.com/clusterdesk/clusterdesk/handlers/editor"
	"github.com/clusterdesk/clusterdesk/handlers/gallery"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/writeaudit"
	"github.com/clusterdesk/clusterdesk/static"
)

// New builds the echo server with the whole route table.
func New(deps Deps) *echo.Echo {
	secureBehindPublicURL(deps) // public_url.go
	h := &Handlers{deps: deps, gate: gateFor(deps), queue: csrQueueOf(deps), attention: attentionStateOf(deps)}
	h.csrf = csrfSessions(deps, h.gate)
	h.rights = page.Rights{Access: deps.Access, Cluster: deps.Cluster, Lookup: deps.Lookup, Log: deps.Log,
		ReadOnly: deps.ReadOnly, Local: h.gate.Mode == auth.ModeLocal, LedgerReaders: deps.LedgerReaders}
	h.trail = &writeaudit.Trail{Cache: deps.Cluster, Recorder: deps.Audit, Log: deps.Log, User: deps.User}
	h.flash = page.Flash{Sessions: deps.Sessions}
	h.pageChrome = &page.Chrome{Cluster: deps.Cluster, Rights: h.rights, Flash: h.flash, Console: deps.User}
	h.replayJobs = replayJobsOf(deps) // before the live updates, which carry their progress
	h.whatIfJobs = whatIfJobsOf(deps)
	// Before any request: the kind registry serves the CSRs' detail page, the
	// APF detail pages' load and the detail pages with lookups from these,
	// and the lists carry the cleanup's links.
	// First: every page's chrome carries the live settings (handlers/live).
	h.live = liveFeature(h)
	h.pageChrome.Live = h.live.Chrome
	// The cleanup before the CSR and FlowSchema pages, which carry its links.
	h.cleanupPages = cleanupFeature(h)
	h.listPages = listsFeature(h) // before the FlowSchema pages, which serve its detail page
	h.csrPages, h.flowSchemaPages, h.insightPages = csrsFeature(h), flowSchemasFeature(h), insightFeature(h)
	h.whatIfPages = whatIfFeature(h)
	h.ledgerPages = ledgerFeature(h)
	h.live.EndStreamsOfRemoteSignOuts() // handlers/live, signout.go
	signIn := signInFeature(h)
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = h.errorHandler

	// Outermost, so a recovered panic is counted as the 500 it becomes.
	e.Use(observeRequests(deps.Metrics, e))
	e.Use(middleware.Recover())
	e.Use(requestLog(deps.Log))
	e.Use(securityHeaders)
	e.Use(strictTransport(deps.PublicOrigin)) // HSTS over TLS or an https public URL (hsts.go)
	e.Use(signIn.LimitSignIns())              // before any body is read (handlers/signin/limit.go)
	e.Use(explainBodyLimit)
	e.Use(bodyLimit()) // maxBody, editorBody on the editor's routes, loginBody on /login (edit_limit.go)
	e.Use(requireIdentity(h.gate, signIn.LoginPage, deps.Log))
	// Only now is a body read: nothing a client without a session sends is buffered.
	e.Use(bufferChunkedBody)
	e.Use(csrfGuard(h.csrf, deps.PublicOrigin)) // origin check and session-bound token (csrf.go)

	healthFeature(h).Register(e) // /healthz, /readyz (handlers/health)
	// Sign-in of every mode, its OIDC callback, and sign-out (handlers/signin).
	signIn.Register(e)
	// The bundle goes out gzip-compressed: the page weight budget
	// (views/layout/budget_test.go) counts compressed bytes; and cached by the
	// content hash in its URLs (static_cache.go).
	e.Group(static.Prefix, middleware.Gzip(), staticCaching).StaticFS("", static.FS)

	// Access per route (access.go): every route under a kind checks, before its
	// handler, that the user may list the kind; a list page shows a Forbidden
	// banner (403), every other route answers 403.
	ofKind := h.kindAccess("", refuse) // the :kind parameter
	listOfKind := h.kindAccess("", banner)
	of := func(id kube.KindID) echo.MiddlewareFunc { return h.kindAccess(id, refuse) }
	csrs, flowSchemas, crds := of(kube.CSRs), of(kube.FlowSchemas), of(kube.CRDs)

	homeFeature(h).Register(e) // what needs attention, then each kind (handlers/home)
	if deps.DevUI {
		gallery.New(h.base()).Register(e) // the component gallery (handlers/gallery)
	}
	// Global search by name across kinds (handlers/search); static, so it wins over /:kind.
	searchFeature(h).Register(e)
	// One event stream per tab; no gzip or timeout middleware may wrap it.
	h.live.Register(e)
	// The CSR queue replaces the generic list; static segments win over :kind.
	// The queue, a storm group's preview, a request's certificate, and a
	// kubelet-serving CSR's SANs against its Node, read as the user after the
	// page (handlers/csrs).
	h.csrPages.RegisterReads(e, h.kindAccess(kube.CSRs, banner), csrs)
	// Who may approve a signer's requests, read as the user (handlers/approvers).
	approversFeature(h).Register(e, csrs)
	// What the approval policies would do with a request (handlers/csrpolicies).
	csrPoliciesFeature(h).Register(e, csrs)
	// FlowSchemas in evaluation order, the request classifier, and the
	// classifier's old address: a FlowSchema named "classify" there, else a
	// redirect (handlers/flowschemas).
	h.flowSchemaPages.RegisterReads(e, h.kindAccess(kube.FlowSchemas, banner), flowSchemas)
	// Replay the recorded writes against a draft admission policy or webhook
	// configuration, before it is applied (handlers/replay); the editor
	// replays its text with it.
	replay := replayFeature(h)
	// The APF what-if and backtest on recorded traffic (handlers/whatif):
	// its POSTs change nothing (readPOSTs); it shows how the traffic
	// classifies, so it needs both FlowSchemas' and priority levels' access.
	h.whatIfPages.Register(e, readPOST, of(kube.PriorityLevels), flowSchemas)
	// A CRD's custom resources: the API server's table, and one object's YAML (handlers/editor).
	ed := editorFeature(h, replay)
	ed.RegisterInstances(e, crds)
	// A CRD version's schema explorer, and which webhooks and policies would
	// intercept a request, also with the objects in a POST body (too large
	// for a URL), which changes nothing and so is not in the read-only group
	// (handlers/insight, read_post.go).
	h.insightPages.Register(e, crds, of(kube.Webhooks), readPOST)
	// The replay pages change nothing, so their POSTs are readPOSTs
	// (handlers/replay); so is the editor's replay of its text, whose
	// policy and binding each need both kinds' access: the replay reads
	// the other as deployed (handlers/editor, replay.go).
	replay.Register(e, of(kube.AdmissionPolicies), readPOST)
	replay.RegisterWebhooks(e, of(kube.Webhooks), of(kube.MutatingWebhooks), readPOST)
	policies, bindings := of(kube.AdmissionPolicies), of(kube.AdmissionPolicyBindings)
	ed.RegisterReplay(e, editorpages.ReplayAccess{kube.AdmissionPolicies: {policies, bindings}, kube.AdmissionPolicyBindings: {bindings, policies},
		kube.Webhooks: {of(kube.Webhooks)}, kube.MutatingWebhooks: {of(kube.MutatingWebhooks)}}, readPOST, editorRoute)
	// The durable ledger (handlers/ledger): every change from every client
	// and every version the watch observed, its exports, and one object's
	// history whether or not it exists (the activity view's URLs redirect
	// there). GET only: nobody edits or deletes history through the console.
	h.ledgerPages.Register(e, ofKind)
	// A large object's YAML, loaded on demand, a kind's list and one
	// object's page (handlers/lists).
	h.listPages.Register(e, listOfKind, ofKind)

	mutating := e.Group("", refuseInReadOnly(deps.ReadOnly))
	// A request's approval, denial and certificate upload (its body gets
	// maxBody, 1 MiB), the bulk decisions of ticked rows and a storm group's
	// (handlers/csrs).
	h.csrPages.RegisterDecisions(mutating, csrs)
	// The editor's pages are in this group too: in read-only mode they are
	// refused rather than offering changes that would be refused; the same
	// editor for a CRD's custom resources, and the delete confirmation of
	// both (handlers/editor).
	ed.Register(mutating, ofKind, crds, editorRoute)
	// Cleanup: delete many objects of :kind, or a CRD's custom resources,
	// after a preview (handlers/cleanup). A POST to the preview comes from
	// ticked rows; only the confirmation deletes.
	h.cleanupPages.Register(mutating, ofKind, crds)
	// The structured FlowSchema form (handlers/flowschemas); "-" is no FlowSchema name.
	h.flowSchemaPages.RegisterForm(mutating, flowSchemas)

	e.RouteNotFound("/*", func(c echo.Context) error {
		return echo.NewHTTPError(http.StatusNotFound, "There is no page at this address.")
	})
	return e
}
