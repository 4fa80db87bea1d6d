package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/labstack/echo/v4"

	cleanuppages "github.com/clusterdesk/clusterdesk/handlers/cleanup"
	"github.com/clusterdesk/clusterdesk/handlers/csrs"
	"github.com/clusterdesk/clusterdesk/handlers/flowschemas"
	"github.com/clusterdesk/clusterdesk/handlers/insight"
	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	liveupdates "github.com/clusterdesk/clusterdesk/handlers/live"
	handlerpage "github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/auth"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
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
	// trail records the writes of every feature (edit_audit.go).
	trail auditTrail
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
			p.Kinds = append(p.Kinds, present.KindNotServed(string(st.Kind.ID), st.Kind.Title, notServed(st.Kind)))
			continue
		}
		p.Kinds = append(p.Kinds, present.KindSummary(string(st.Kind.ID), st.Kind.Title, string(st.State), st.Count, st.Err))
	}
	return render(c, http.StatusOK, pages.Home(p))
}

// kindFor resolves the :kind path segment, or answers 404.
func (h *Handlers) kindFor(c echo.Context) (kube.Kind, kinds.Kind, error) {
	id := kube.KindID(c.Param("kind"))
	kp, ok := kinds.Of(id)
	kind, known := h.deps.Cluster.Kind(id)
	if !ok || !known {
		return kube.Kind{}, kinds.Kind{}, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("clusterdesk has no page for %q.", c.Param("kind")))
	}
	return kind, kp, nil
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

func (h *Handlers) list(c echo.Context) error {
	kind, kp, err := h.kindFor(c)
	if err != nil {
		return err
	}
	chrome := h.chrome(c, kind.Title, kind.ID, model.Crumb{Label: kind.Title})
	q := handlerpage.ParseListQuery(c.QueryParams())
	q.LintErr = present.LintFilterError(string(kind.ID), q.Lint)
	status := http.StatusOK
	var page model.ListPage
	if !handlerpage.MayListKind(c) { // kindAccess (access.go)
		page, status = model.ListPage{Forbidden: true}, http.StatusForbidden
		chrome.Banners = append(chrome.Banners, handlerpage.ForbiddenBanner(kind, nil))
	} else {
		page, err = kp.List(h.deps.Cluster, q, time.Now())
		switch {
		case apierrors.IsForbidden(err):
			page, status = model.ListPage{Forbidden: true}, http.StatusForbidden
			chrome.Banners = append(chrome.Banners, handlerpage.ForbiddenBanner(kind, err))
		case errors.Is(err, kube.ErrNotServed):
			// Not an error of the console's: the API server lacks the kind
			// (an older server, or the CRD of the console's own kind not
			// installed), which the page says instead of failing.
			page = model.ListPage{Empty: "No " + kind.Title + ": " + notServed(kind) + "."}
			chrome.Banners = append(chrome.Banners, model.Banner{Tone: model.ToneWarning, Title: "Not served",
				Message: kind.Title + " are " + notServed(kind) + ", so there is nothing to list. " + notServedHint(kind),
				TestID:  "banner-not-served"})
		case errors.Is(err, kube.ErrNotSynced):
			page, status = model.ListPage{Empty: "Loading " + kind.Title + "…"}, http.StatusServiceUnavailable
			c.Response().Header().Set("Retry-After", "2")
		case err != nil:
			return err
		}
	}
	page.Chrome, page.KindID, page.Title, page.Singular, page.Action = chrome, string(kind.ID), kind.Title, kind.Singular, urls.List(kind.ID)
	status = handlerpage.SelectorStatus(&page, q, status) // handlers/page/list_selector.go
	status = handlerpage.LintStatus(&page, q, status)     // handlers/page/list_lint.go
	page.NewHref = h.creating().NewHref(c, kind.ID)       // handlers/page/list_new.go
	page.CleanupHref = h.cleanupPages.Href(c, kind.ID)
	h.addTicks(c, &page, kind.ID) // list_ticks.go
	if listMetrics := hooksByKind[kind.ID].listMetrics; listMetrics != nil && !page.Forbidden {
		if st, shown := h.flowSchemaPages.Load(c); shown {
			listMetrics(h.deps.Cluster, kind.ID, &page, st) // the API server's own numbers (apf_load.go, webhook_health.go)
		}
	}
	return renderPage(c, status, pages.List(page), pages.ListTable(page))
}

func (h *Handlers) detail(c echo.Context) error {
	kind, kp, err := h.kindFor(c)
	if err != nil {
		return err
	}
	hooks := hooksByKind[kind.ID] // kind_hooks.go
	if hooks.page != nil {
		return hooks.page(h, c)
	}
	name := c.Param("name")
	h.live.MarkLive(c, kind.ID) // before the page reads the object (handlers/live, Chrome)
	page, err := h.detailPage(c, kp, name, time.Now())
	if err != nil {
		return err
	}
	// handlers/page/detail_yaml.go
	if err := handlerpage.SetCachedYAML(&page, h.deps.Cluster, kind.ID, name); err != nil {
		return err
	}
	page.Chrome = h.chrome(c, name, kind.ID,
		model.Crumb{Label: kind.Title, Href: urls.List(kind.ID)}, model.Crumb{Label: name})
	page.MayUpdate, page.MayDelete = h.mayChange(c, kind, name)
	if hooks.detailMetrics != nil {
		hooks.detailMetrics(h, c, kind.ID, name, &page)
	}
	return render(c, http.StatusOK, pages.Detail(page))
}

// notServed says why the API server does not serve a kind: a custom resource
// of the console's own is not installed, a built-in kind is too new for it.
func notServed(k kube.Kind) string {
	if k.ID == kube.CSRApprovalPolicies {
		return "not installed in this cluster"
	}
	return "not served by this API server"
}

// notServedHint is what to do about it.
func notServedHint(k kube.Kind) string {
	if k.ID == kube.CSRApprovalPolicies {
		return "Their CRD is deploy/base/csrapprovalpolicies.yaml; once it is created they appear here, without a restart."
	}
	return "Newer Kubernetes versions serve them."
}

// creating is what a list page's "New" button depends on (handlers/page/list_new.go).
func (h *Handlers) creating() handlerpage.Creating {
	return handlerpage.Creating{Log: h.deps.Log, Cluster: h.deps.Cluster, Access: h.deps.Access, ReadOnly: h.deps.ReadOnly}
}

// objectYAML serves GET /:kind/:name/yaml: an object's YAML from the cache, as
// the fragment a detail page's YAML disclosure loads (htmx), or as plain text
// (the link for a browser without script).
func (h *Handlers) objectYAML(c echo.Context) error {
	kind, _, err := h.kindFor(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	obj, err := h.deps.Cluster.Object(kind.ID, name)
	if err != nil {
		return err
	}
	y, err := kube.YAML(obj)
	if err != nil {
		return err
	}
	if fragmentWanted(c) {
		return render(c, http.StatusOK, pages.YAMLFragment(y, handlerpage.YAMLNote(y)))
	}
	if note := handlerpage.YAMLNote(y); note != "" {
		y = "# " + note + "\n" + y
	}
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", []byte(y))
}
