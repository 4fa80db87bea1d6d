package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// maxBulk bounds one bulk decision: more than a person can have looked at.
const maxBulk = 500

// bulkWorkers is how many decisions are in flight at once: enough to finish
// a page of requests in a moment, few enough not to flood the API server's
// priority level for this user.
const bulkWorkers = 4

// bulkOutcome is one CSR's result.
type bulkOutcome struct {
	ref      csrRef
	verb     string // "Approved" or "Denied"
	warnings []string
	err      error
	capture  *kube.CSRCapture // the CSR before and after, for the audit trail
}

// bulkDecideCSRs approves or denies every selected CSR (POST /csrs/bulk with
// names, each "<uid>/<name>", action=approve|deny and an optional message) as
// the signed-in user, each through its own /approval write on the object with
// that UID, and answers with the queue and a result per CSR. A failure for one
// CSR does not stop the others; the failed ones stay selected (unless the name
// now holds another request, which the person has not reviewed) and the
// message stays in the form, so nothing typed or chosen is lost. The status is 200 when anything succeeded; when nothing did,
// the failures' common status (403 when all were forbidden), else 422.
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
	text := strings.TrimSpace(form.Get("message"))
	if len(text) > maxReasonLen {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("The message is %d characters long; at most %d are kept in the condition.", len(text), maxReasonLen))
	}
	refs, err := bulkRefs(form)
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	if len(refs) > maxBulk {
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf("%d requests were selected; decide at most %d at once.", len(refs), maxBulk))
	}
	ret, _ := url.ParseQuery(form.Get("return"))
	q := present.ParseCSRQueueQuery(ret)

	if len(refs) == 0 {
		page, _, err := h.csrQueuePage(c, q, nil)
		if err != nil {
			return err
		}
		page.Message = text
		page.Chrome.Banners = append(page.Chrome.Banners, model.Banner{Tone: model.ToneWarning, Title: "Nothing selected",
			Message: "Tick the pending requests to decide, then choose Approve or Deny.", TestID: "bulk-none"})
		return render(c, http.StatusBadRequest, pages.CSRQueue(page))
	}

	verb, reason, msg := h.csrDecision(h.user(c), approve, text)
	jobs := make([]csrJob, len(refs))
	for i, ref := range refs {
		jobs[i] = csrJob{ref: ref, approve: approve, verb: verb, reason: reason, msg: msg}
	}
	outcomes := h.decideAll(c.Request().Context(), jobs)

	result, failed := h.bulkResult(c, verb, text, outcomes)

	page, _, err := h.csrQueuePage(c, q, failed)
	if err != nil {
		return err
	}
	page.Bulk = &result
	if result.Failed > 0 {
		page.Message = text
	}
	return render(c, bulkStatus(outcomes), pages.CSRQueue(page))
}

// bulkResult audits every outcome and words it for the page, one line per
// CSR; failed lists the selections to tick again (not the replaced ones: the
// request now under the name has not been reviewed).
func (h *Handlers) bulkResult(c echo.Context, verb, text string, outcomes []bulkOutcome) (model.CSRBulkResult, []string) {
	result := model.CSRBulkResult{Verb: verb}
	var failed []string
	for _, o := range outcomes {
		name, did := o.ref.Name, strings.ToLower(o.verb)
		h.audit(c, csrRecord(o.verb, name, text, o.capture, o.err))
		item := model.CSRBulkItem{Name: name, Href: urls.CSR(name), OK: o.err == nil, Warnings: o.warnings}
		var replaced *kube.ReplacedError
		switch {
		case o.err == nil:
			result.Succeeded++
			item.Message = did + "."
		case errors.As(o.err, &replaced):
			result.Failed++
			item.Replaced = true
			item.Message = "not " + did + ": " + csrReplacedText
		default:
			result.Failed++
			failed = append(failed, model.CSRSelectValue(string(o.ref.UID), name))
			item.Message = "not " + did + ": " + apiMessage(o.err)
		}
		result.Items = append(result.Items, item)
	}
	return result, failed
}

// csrJob is one decision to write: which request, approve or deny, and the
// condition's reason and message.
type csrJob struct {
	ref               csrRef
	approve           bool
	verb, reason, msg string
}

// decideAll decides every job with a few workers, each as its own /approval
// write on the object with the job's UID, and returns the outcomes in order.
func (h *Handlers) decideAll(ctx context.Context, jobs []csrJob) []bulkOutcome {
	out := make([]bulkOutcome, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(bulkWorkers, len(jobs)) {
		wg.Go(func() {
			for i := range next {
				j := jobs[i]
				cctx, capture := kube.WithCSRCapture(ctx)
				w, err := h.deps.Writer.DecideCSR(cctx, j.ref.Name, j.ref.UID, j.approve, j.reason, j.msg)
				out[i] = bulkOutcome{ref: j.ref, verb: j.verb, warnings: w, err: err, capture: capture}
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// apiMessage is the API server's own message for an error, or the error's text.
func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	if u, ok := unreachablePage(err); ok {
		return strings.ToLower(u.Title[:1]) + u.Title[1:] + ": " + u.Message + " (" + err.Error() + ")"
	}
	return err.Error()
}

// bulkStatus is 200 when anything succeeded; else the failures' common HTTP
// status, or 422 when they differ.
func bulkStatus(outcomes []bulkOutcome) int {
	common := 0
	for _, o := range outcomes {
		if o.err == nil {
			return http.StatusOK
		}
		code := http.StatusInternalServerError
		var status apierrors.APIStatus
		if errors.As(o.err, &status) && status.Status().Code != 0 {
			code = int(status.Status().Code)
		} else if u, ok := unreachablePage(o.err); ok {
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
