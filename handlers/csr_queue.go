package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// csrQueueOf is the CSR queue caches of the server New builds: Deps'
// when given, else those of its live updates, so that pages and live rows
// share one facts cache as they share the informer cache, else its own.
// Each server has its own (csrqueue.Queue), never a process-wide one.
func csrQueueOf(deps Deps) *csrqueue.Queue {
	if deps.CSRQueue != nil {
		return deps.CSRQueue
	}
	if deps.Live != nil {
		return deps.Live.csrQueue
	}
	return csrqueue.New(deps.Cluster)
}

// csrQueue serves the approval queue (GET /csrs): the full page, or only the
// table fragment for htmx.
func (h *Handlers) csrQueue(c echo.Context) error {
	q := csrqueue.ParseQuery(c.QueryParams())
	page, status, err := h.csrQueuePage(c, q, nil)
	if err != nil {
		return err
	}
	if page.Filter.SelectorError != "" && status == http.StatusOK {
		status = http.StatusBadRequest // the page shows the parse error and no rows
	}
	if status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "2")
	}
	page.NewHref = h.newHref(c, kube.CSRs) // list_new.go; none for htmx
	page.CleanupHref, page.CleanupTickedURL = h.csrCleanupHref(c, q)
	return renderPage(c, status, pages.CSRQueue(page), pages.CSRQueueTable(page))
}

// csrQueuePage builds the queue for q, pre-selecting the named CSRs. A user who
// may not list CSRs gets the page with a banner and 403; a cache still
// syncing, an empty page and 503.
func (h *Handlers) csrQueuePage(c echo.Context, q csrqueue.Query, selected []string) (model.CSRQueuePage, int, error) {
	kind, known := h.deps.Cluster.Kind(kube.CSRs)
	if !known {
		return model.CSRQueuePage{}, 0, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("clusterdesk has no page for %q.", kube.CSRs))
	}
	chrome := h.chrome(c, kind.Title, kind.ID, model.Crumb{Label: kind.Title})
	forbidden := func(err error) (model.CSRQueuePage, int, error) {
		chrome.Banners = append(chrome.Banners, forbiddenBanner(kind, err))
		return model.CSRQueuePage{Chrome: chrome, Title: kind.Title, Action: urls.CSRs, Forbidden: true}, http.StatusForbidden, nil
	}
	if !mayListKind(c) { // kindAccess (access.go)
		return forbidden(nil)
	}
	items, err := h.deps.Cluster.CSRs()
	switch {
	case apierrors.IsForbidden(err):
		return forbidden(err)
	case errors.Is(err, kube.ErrNotSynced):
		page := present.CSRQueue(nil, q, present.CSRQueueEnv{Now: time.Now()})
		page.Chrome, page.Empty = chrome, "Loading "+kind.Title+"…"
		return page, http.StatusServiceUnavailable, nil
	case err != nil:
		return model.CSRQueuePage{}, 0, err
	}
	sel, selErr := present.ParseSelector(q.Selector)
	if selErr != nil {
		sel = labels.Nothing()
	}
	page := present.CSRQueue(items, q, present.CSRQueueEnv{
		Now:       time.Now(),
		Checks:    h.queue.Checks(),
		MayDecide: h.csrMayDecide(c),
		Cache:     h.queue.Facts(),
		Selected:  selected,
		Labels:    sel,
		MayDelete: h.mayDeleteAll(c, kube.CSRs),
	})
	page.Chrome = chrome
	if selErr != nil {
		page.Filter.SelectorError = selErr.Error()
		page.Empty = "Correct the label selector to see CertificateSigningRequests."
	}
	return page, http.StatusOK, nil
}
