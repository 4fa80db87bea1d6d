package csrs

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// csrQueue serves the approval queue (GET /csrs): the full page, or only the
// table fragment for htmx.
func (h *Handlers) csrQueue(c echo.Context) error {
	q := csrqueue.ParseQuery(c.QueryParams())
	qp, status, err := h.csrQueuePage(c, q, nil)
	if err != nil {
		return err
	}
	if qp.Filter.SelectorError != "" && status == http.StatusOK {
		status = http.StatusBadRequest // the qp shows the parse error and no rows
	}
	if status == http.StatusServiceUnavailable {
		c.Response().Header().Set("Retry-After", "2")
	}
	// handlers/page/list_new.go; none for htmx
	qp.NewHref = page.Creating{Log: h.d.Log, Cluster: h.d.Cluster, Access: h.d.Access, ReadOnly: h.d.ReadOnly}.NewHref(c, kube.CSRs)
	qp.CleanupHref, qp.CleanupTickedURL = h.d.Cleanup.CSRHref(c, q)
	return page.RenderPage(c, status, pages.CSRQueue(qp), pages.CSRQueueTable(qp))
}

// policies are the CSR approval policies whose verdicts the user's queue
// shows: those of the shared cache, when the user may list them (the access
// review is kept 30 s); nil when there are none or they may not.
func (h *Handlers) policies(c echo.Context) *csrpolicy.Compiled {
	pol := h.d.Queue.Policies()
	if pol == nil || pol.Err != nil {
		return nil
	}
	gr := kube.CSRApprovalPolicyResource.GroupResource()
	ok, err := h.d.Access.Can(c.Request().Context(), "list", gr.Group, gr.Resource, "", "")
	if err != nil || !ok {
		return nil
	}
	return pol
}

// csrQueuePage builds the queue for q, pre-selecting the named CSRs. A user who
// may not list CSRs gets the page with a banner and 403; a cache still
// syncing, an empty page and 503.
func (h *Handlers) csrQueuePage(c echo.Context, q csrqueue.Query, selected []string) (model.CSRQueuePage, int, error) {
	kind, known := h.d.Cluster.Kind(kube.CSRs)
	if !known {
		return model.CSRQueuePage{}, 0, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("clusterdesk has no page for %q.", kube.CSRs))
	}
	h.askQueueQuestionsAtOnce(c) // queue_access.go
	chrome := h.d.Chrome(c, kind.Title, kind.ID, model.Crumb{Label: kind.Title})
	forbidden := func(err error) (model.CSRQueuePage, int, error) {
		chrome.Banners = append(chrome.Banners, page.ForbiddenBanner(kind, err))
		return model.CSRQueuePage{Chrome: chrome, Title: kind.Title, Action: urls.CSRs, Forbidden: true}, http.StatusForbidden, nil
	}
	if !page.MayListKind(c) { // the route's kindAccess (handlers/access.go)
		return forbidden(nil)
	}
	sel, selErr := page.ParseSelector(q.Selector)
	if selErr != nil {
		sel = labels.Nothing()
	}
	env := present.CSRQueueEnv{
		Now:       time.Now(),
		MayDecide: h.decisions(c).MayDecide(c.Request().Context()),
		Selected:  selected,
		MayDelete: h.d.Cleanup.MayDeleteAll(c, kube.CSRs),
		Policies:  h.policies(c),
	}
	// The queue reads its index, kept per change of the informer cache; it
	// lists the cache only for its first view (then the cache's errors).
	res, err := h.d.Queue.Run(q, csrqueue.Env{Now: env.Now, Words: present.CSRQueueWords{}, MayDecide: env.MayDecide,
		Labels: sel, Policies: env.Policies})
	switch {
	case apierrors.IsForbidden(err):
		return forbidden(err)
	case errors.Is(err, kube.ErrNotSynced):
		empty := csrqueue.Run(nil, q, csrqueue.Env{Now: env.Now, Words: present.CSRQueueWords{}})
		qp := present.CSRQueueOf(empty, q, present.CSRQueueEnv{Now: env.Now})
		qp.Chrome, qp.Empty = chrome, "Loading "+kind.Title+"…"
		return qp, http.StatusServiceUnavailable, nil
	case err != nil:
		return model.CSRQueuePage{}, 0, err
	}
	qp := present.CSRQueueOf(res, q, env)
	qp.Chrome = chrome
	if selErr != nil {
		qp.Filter.SelectorError = selErr.Error()
		qp.Empty = "Correct the label selector to see CertificateSigningRequests."
	} else {
		liveView(&qp, res, env) // queue_live.go
	}
	return qp, http.StatusOK, nil
}
