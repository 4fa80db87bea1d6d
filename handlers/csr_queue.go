package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// csrDecodes remembers decoded requests for every page of the process, like
// the informer cache it sits beside: spec.request is immutable and decoding
// is a pure function of it, so sharing is safe, and it spares a queue of
// thousands of CSRs one signature verification per row per view.
// Sized above the 50,000 CSRs the page benchmark holds (and a full memo
// starts again empty, so a cluster just over the size would decode every view).
var csrDecodes = csr.NewMemo(200_000)

// csrQueueFacts keeps, per CSR object, what every queue view derives from it
// (state, subject line, search text, findings), for the whole process.
var csrQueueFacts = &present.CSRQueueCache{}

// csrChecksEnv is what the checks get from outside a CSR. clusterdesk does not
// watch Nodes (one more informer over the largest objects of a big cluster),
// so the kubelet-serving check says the Node is unknown.
func csrChecksEnv() present.CSRChecksEnv {
	return present.CSRChecksEnv{Decode: csrDecodes.Decode}
}

// csrQueue serves the approval queue (GET /csrs): the full page, or only the
// table fragment for htmx.
func (h *Handlers) csrQueue(c echo.Context) error {
	q := present.ParseCSRQueueQuery(c.QueryParams())
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
func (h *Handlers) csrQueuePage(c echo.Context, q present.CSRQueueQuery, selected []string) (model.CSRQueuePage, int, error) {
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
		Checks:    csrChecksEnv(),
		MayDecide: h.csrMayDecide(c),
		Cache:     csrQueueFacts,
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
