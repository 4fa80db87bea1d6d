package handlers

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/flowschemas"
	"github.com/clusterdesk/clusterdesk/handlers/insight"
	ledgerpages "github.com/clusterdesk/clusterdesk/handlers/ledger"
	"github.com/clusterdesk/clusterdesk/handlers/lists"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// kindHooks is what the handlers root adds to a few kinds' pages from its
// own services (the user's direct lookups, the API server's metrics, the
// CSR queue). A kind is declared in handlers/kinds; an ordinary kind has no
// hooks.
type kindHooks struct {
	// live, when set, builds the detail page instead of the declaration's
	// Detail: for kinds whose page adds direct lookups (handlers/insight,
	// details.go).
	live func(*insight.Handlers, echo.Context, string, time.Time) (model.DetailPage, error)
	// page, when set, replaces the generic detail page, and ownRows the
	// generic live rows: for a kind with pages of its own (the CSR page, and
	// the queue, whose rows handlers/live renders from the queue's index).
	page    func(*Handlers, echo.Context) error
	ownRows bool
	// listMetrics and detailMetrics, when set, add what the API server's
	// /metrics says about the kind's objects (APF load, webhook health).
	// listMetrics decorates a list page with the user's view of the load
	// (columns and cells): the full list, and the one-row lists of live rows,
	// which users who may read /metrics receive on live.MetricsRowsTopic.
	listMetrics   listMetricsFunc
	detailMetrics func(*flowschemas.Handlers, echo.Context, kube.KindID, string, *model.DetailPage)
	// detailHistory, when set, adds what the ledger says of the object
	// (handlers/ledger).
	detailHistory func(*ledgerpages.Handlers, echo.Context, string, *model.DetailPage)
}

// listMetricsFunc adds the load columns and the banner saying where they come
// from to a list page (or the one-row page of a live update).
type listMetricsFunc func(Cluster, kube.KindID, *model.ListPage, present.APFLoadState)

// hooksByKind holds the hooks of the kinds that have any (kind_hooks_test.go:
// each is a declared kind). It is filled by init, not by its initializer: the
// hooks refer to handlers that read it, which an initializer would make an
// initialization cycle.
var hooksByKind map[kube.KindID]kindHooks

func init() {
	// The live APF load and what it says of webhooks (handlers/flowschemas).
	webhooks := kindHooks{listMetrics: flowschemas.WebhookListHealth, detailMetrics: (*flowschemas.Handlers).AddDetailWebhookHealth}
	apf := kindHooks{detailMetrics: (*flowschemas.Handlers).AddDetailLoad}
	hooksByKind = map[kube.KindID]kindHooks{
		kube.CSRs:             {page: csrDetail, ownRows: true},
		kube.FlowSchemas:      apf,
		kube.PriorityLevels:   {listMetrics: flowschemas.PriorityLevelListLoad, detailMetrics: (*flowschemas.Handlers).AddDetailLoad},
		kube.CRDs:             {live: (*insight.Handlers).CRDDetail},
		kube.Webhooks:         withLookups(webhooks, (*insight.Handlers).WebhookDetail),
		kube.MutatingWebhooks: withLookups(webhooks, (*insight.Handlers).MutatingWebhookDetail),
		kube.CSIDrivers:       {live: (*insight.Handlers).CSIDriverDetail},
		// What each version of a policy decided (issue 47, item 4).
		kube.CSRApprovalPolicies: {detailHistory: (*ledgerpages.Handlers).AddPolicyVersions},
	}
}

// withLookups sets the detail page builder that adds direct lookups.
func withLookups(k kindHooks, live func(*insight.Handlers, echo.Context, string, time.Time) (model.DetailPage, error)) kindHooks {
	k.live = live
	return k
}

// listHooks is kind id's hooks as the generic pages take them
// (handlers/lists), bound to h's services when a page asks.
func (h *Handlers) listHooks(id kube.KindID) lists.Hooks {
	k := hooksByKind[id]
	var out lists.Hooks
	if k.page != nil {
		out.Page = func(c echo.Context) error { return k.page(h, c) }
	}
	if k.live != nil {
		out.Detail = func(c echo.Context, name string, now time.Time) (model.DetailPage, error) {
			return k.live(h.insightPages, c, name, now)
		}
	}
	if k.listMetrics != nil {
		out.ListMetrics = func(c echo.Context, id kube.KindID, p *model.ListPage) {
			if st, shown := h.flowSchemaPages.Load(c); shown {
				k.listMetrics(h.deps.Cluster, id, p, st) // handlers/flowschemas: metrics.go, webhook_health.go
			}
		}
	}
	if k.detailHistory != nil {
		out.DetailHistory = func(c echo.Context, name string, p *model.DetailPage) {
			k.detailHistory(h.ledgerPages, c, name, p)
		}
	}
	if k.detailMetrics != nil {
		out.DetailMetrics = func(c echo.Context, id kube.KindID, name string, p *model.DetailPage) {
			k.detailMetrics(h.flowSchemaPages, c, id, name, p)
			if id == kube.FlowSchemas || id == kube.PriorityLevels {
				// The what-if's link, and a level's backtest (handlers/whatif).
				h.whatIfPages.AddBacktest(c, id, name, p)
			}
		}
	}
	return out
}
