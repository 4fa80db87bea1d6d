package csrs

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// maxUnknownNamed bounds the selections the refusal names one by one.
const maxUnknownNamed = 20

// unknownCSRRefs are the selections whose name holds no CSR the console
// knows now. The queue a person selects from is drawn from the same cache, so
// such a selection was never on their page, or its request has gone since.
// A known name with another UID is not among them: that is a request replaced
// since it was reviewed, which the decision refuses on its own line (Batch,
// kube.ReplacedError) while deciding the others, as the person expects.
//
// Deciding unknown names would write nothing, yet each refusal is an audit
// record with a Warning Event: a form with hundreds of made-up selections
// would fill the audit trail (and its bounded Event queue) with refusals. So
// the bulk decision refuses the whole selection before writing or recording
// anything.
func (h *Handlers) unknownCSRRefs(refs []csrRef) []csrRef {
	var out []csrRef
	for _, r := range refs {
		if _, err := h.d.Cluster.CSR(r.Name); err != nil {
			out = append(out, r)
		}
	}
	return out
}

// bulkUnknownRefused answers a bulk decision with unknown selections: the
// queue again with the known ones still ticked and the message kept, a
// banner naming the unknown ones, and 409. Nothing was written or recorded.
func (h *Handlers) bulkUnknownRefused(c echo.Context, q csrqueue.Query, text string, refs, unknown []csrRef) error {
	bad := make(map[csrRef]bool, len(unknown))
	for _, r := range unknown {
		bad[r] = true
	}
	var keep []string
	for _, r := range refs {
		if !bad[r] {
			keep = append(keep, model.CSRSelectValue(string(r.UID), r.Name))
		}
	}
	qp, _, err := h.csrQueuePage(c, q, keep)
	if err != nil {
		return err
	}
	qp.Message = text
	qp.Chrome.Banners = append(qp.Chrome.Banners, model.Banner{Tone: model.ToneError,
		Title:   "Nothing was decided: " + strconv.Itoa(len(unknown)) + " of the selected requests are not in the queue",
		Message: "There is no request named " + namedRefs(unknown) + " (deleted since you loaded the queue, or never there). Review the queue and select again.",
		TestID:  "bulk-unknown"})
	return page.Render(c, http.StatusConflict, pages.CSRQueue(qp))
}

// namedRefs lists the refs' names, the first maxUnknownNamed of them.
func namedRefs(refs []csrRef) string {
	var names []string
	for i, r := range refs {
		if i == maxUnknownNamed {
			names = append(names, "and "+strconv.Itoa(len(refs)-i)+" more")
			break
		}
		names = append(names, strconv.Quote(r.Name))
	}
	return strings.Join(names, ", ")
}
