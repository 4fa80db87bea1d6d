package csrs

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/decide"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// maxBulk bounds one bulk decision and one step of a group action.
const maxBulk = decide.MaxBatch

// bulkDecideCSRs approves or denies every selected CSR (POST /csrs/bulk with
// names, each "<uid>/<name>", action=approve|deny and an optional message) as
// the signed-in user (decide.Decisions.Batch), and answers with the queue and
// a result per CSR. The failed ones stay selected (unless the name now holds
// another request, which the person has not reviewed) and the message stays
// in the form, so nothing typed or chosen is lost. The status is bulkStatus's.
func (h *Handlers) bulkDecideCSRs(c echo.Context) error {
	form, err := c.FormParams()
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	var approve bool
	switch form.Get("action") {
	case "approve":
		approve = true
	case "deny":
	default:
		return echo.NewHTTPError(http.StatusBadRequest, `Choose "Approve selected" or "Deny selected".`)
	}
	text, err := ParseReason(form.Get("message"))
	if err != nil {
		return err
	}
	refs, err := bulkRefs(form)
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	ret, _ := url.ParseQuery(form.Get("return"))
	q := csrqueue.ParseQuery(ret)
	if len(refs) == 0 {
		return h.bulkNothingSelected(c, q, text)
	}
	// Over maxBulk, Batch refuses the whole selection (400) by itself.
	if unknown := h.unknownCSRRefs(refs); len(unknown) > 0 && len(refs) <= maxBulk {
		return h.bulkUnknownRefused(c, q, text, refs, unknown)
	}
	outcomes, err := h.decisions(c).Batch(c.Request().Context(), h.user(c), refs, approve, text)
	if err != nil {
		return invalidDecision(err)
	}
	verb, _, _ := decide.Condition("", approve, "")
	result, failed := csrBulkResult(verb, outcomes)
	qp, _, err := h.csrQueuePage(c, q, failed)
	if err != nil {
		return err
	}
	qp.Bulk = &result
	if result.Failed > 0 {
		qp.Message = text
	}
	return page.Render(c, bulkStatus(outcomes), pages.CSRQueue(qp))
}

// bulkNothingSelected answers a bulk form without a selection: the queue
// again, the message kept, and a word on what to do (400).
func (h *Handlers) bulkNothingSelected(c echo.Context, q csrqueue.Query, text string) error {
	qp, _, err := h.csrQueuePage(c, q, nil)
	if err != nil {
		return err
	}
	qp.Message = text
	qp.Chrome.Banners = append(qp.Chrome.Banners, model.Banner{Tone: model.ToneWarning, Title: "Nothing selected",
		Message: "Tick the pending requests to decide, then choose Approve or Deny.", TestID: "bulk-none"})
	return page.Render(c, http.StatusBadRequest, pages.CSRQueue(qp))
}

// invalidDecision answers a decision the use case refused before writing
// (*decide.InvalidError) with 400 and its text.
func invalidDecision(err error) error {
	var invalid *decide.InvalidError
	if errors.As(err, &invalid) {
		return echo.NewHTTPError(http.StatusBadRequest, invalid.Error())
	}
	return err
}

// csrBulkResult words every outcome for the page, one line per CSR; failed lists
// the selections to tick again (not the replaced ones: the request now under
// the name has not been reviewed).
func csrBulkResult(verb string, outcomes []decide.Decision) (model.CSRBulkResult, []string) {
	result := model.CSRBulkResult{Verb: verb}
	var failed []string
	for _, o := range outcomes {
		name, did := o.Ref.Name, strings.ToLower(o.Verb())
		item := model.CSRBulkItem{Name: name, Href: urls.CSR(name), OK: o.Err == nil, Warnings: o.Warnings}
		_, replaced := o.Replaced()
		switch {
		case o.Err == nil:
			result.Succeeded++
			item.Message = did + "."
		case replaced:
			result.Failed++
			item.Replaced = true
			item.Message = "not " + did + ": " + ReplacedText
		default:
			result.Failed++
			failed = append(failed, model.CSRSelectValue(string(o.Ref.UID), name))
			item.Message = "not " + did + ": " + apiMessage(o.Err)
		}
		result.Items = append(result.Items, item)
	}
	return result, failed
}

// apiMessage is the API server's own message for an error, or the error's text.
func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	if u, ok := page.Unreachable(err); ok {
		return strings.ToLower(u.Title[:1]) + u.Title[1:] + ": " + u.Message + " (" + err.Error() + ")"
	}
	return err.Error()
}

// bulkStatus is 200 when anything succeeded; else the failures' common HTTP
// status, or 422 when they differ.
func bulkStatus(outcomes []decide.Decision) int {
	common := 0
	for _, o := range outcomes {
		if o.Err == nil {
			return http.StatusOK
		}
		code := http.StatusInternalServerError
		var status apierrors.APIStatus
		if errors.As(o.Err, &status) && status.Status().Code != 0 {
			code = int(status.Status().Code)
		} else if u, ok := page.Unreachable(o.Err); ok {
			code = u.Status
		}
		switch common {
		case 0:
			common = code
		case code:
		default:
			return http.StatusUnprocessableEntity
		}
	}
	return common
}
