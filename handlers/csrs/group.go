package csrs

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// A group action decides at most maxBulk requests per step, like a bulk
// decision: a step of 500 takes about a second on a healthy API server
// (decide.MaxBatch), and its confirm form stays far below the body limit. A
// larger storm is decided in steps (csrqueue.PlanStorm).

// csrStorm finds the storm of the :id path parameter for a user who may read
// CSRs and decide for its signer.
func (h *Handlers) csrStorm(c echo.Context) (*csrqueue.Storm, error) {
	id := c.Param("id")
	if _, err := h.csrKind(); err != nil {
		return nil, err
	}
	// Storms have actions ("s-" retry storms, "r-" requester storms); a
	// duplicate set ("d-") is only a filter: its requests come from
	// different requesters, each to be decided on its own.
	if !csrqueue.ValidGroupID(id) || strings.HasPrefix(id, "d-") {
		return nil, echo.NewHTTPError(http.StatusNotFound, "There is no such group of requests.")
	}
	st := h.d.Queue.Storms().ByID(id)
	if st == nil {
		return nil, echo.NewHTTPError(http.StatusNotFound, "This group has fewer than two pending requests now: it was decided, or its requests were deleted. Back to the queue: /csrs")
	}
	if may := h.decisions(c).MayDecide(c.Request().Context()); may == nil || !may(st.Key.Signer) {
		return nil, echo.NewHTTPError(http.StatusForbidden, "You may not approve or deny requests for the signer "+st.Key.Signer+".")
	}
	return st, nil
}

// csrGroupPreview shows what a group action will do (GET
// /csrs/groups/:id?action=approve-newest|deny-all), request by request, with
// the confirm form that carries exactly those requests and their UIDs.
func (h *Handlers) csrGroupPreview(c echo.Context) error {
	st, err := h.csrStorm(c)
	if err != nil {
		return err
	}
	p, err := present.CSRGroupPreviewPage(st, c.QueryParam("action"), maxBulk, time.Now())
	if errors.Is(err, csrqueue.ErrApproveNewestOfMany) {
		return echo.NewHTTPError(http.StatusBadRequest, "Not offered for this group: "+err.Error()+".")
	}
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, `Choose "approve-newest" or "deny-all".`)
	}
	p.Chrome = h.d.Chrome(c, p.Title, "csrs", model.Crumb{Label: "CertificateSigningRequests", Href: urls.CSRs},
		model.Crumb{Label: p.Group.Title, Href: p.Group.Href}, model.Crumb{Label: p.Title})
	c.Response().Header().Set("Cache-Control", "no-store")
	return page.Render(c, http.StatusOK, pages.CSRGroupPreview(p))
}

// csrGroupDecide writes the confirmed preview (POST /csrs/groups/:id/decide
// with approve, at most one "<uid>/<name>", deny, any number, and a message)
// as the signed-in user (decide.Decisions.Group: each request on its own, on
// the object with the UID the preview showed). It answers with the queue and
// a result per request; the status is bulkStatus's.
func (h *Handlers) csrGroupDecide(c echo.Context) error {
	if _, err := h.csrKind(); err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	text, err := ParseReason(form.Get("message"))
	if err != nil {
		return err
	}
	approve, err := parseRefs(form["approve"])
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	deny, err := parseRefs(form["deny"])
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	outcomes, err := h.decisions(c).Group(c.Request().Context(), h.user(c), approve, deny, text)
	if err != nil {
		return invalidDecision(err)
	}
	result, _ := csrBulkResult("Decided", outcomes)
	qp, _, err := h.csrQueuePage(c, csrqueue.Query{}, nil)
	if err != nil {
		return err
	}
	qp.Bulk = &result
	return page.Render(c, bulkStatus(outcomes), pages.CSRQueue(qp))
}
