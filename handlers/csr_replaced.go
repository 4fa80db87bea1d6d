package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/csrs"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// csrReplacedText is what a person is told when the request they decided on
// was deleted and created again under its name before the decision arrived
// (handlers/csrs, which says it of a bulk or group decision too).
const csrReplacedText = csrs.ReplacedText

// csrReplaced answers a decision the API server refused because the CSR under
// the name is no longer the one reviewed: 409, nothing written, and the new
// request laid out as the detail page does (from the live object DecideCSR
// read, since the cache may not have seen it yet), with its own buttons.
func (h *Handlers) csrReplaced(c echo.Context, r *kube.ReplacedError) error {
	kind, err := h.csrKind(c, r.Name)
	if err != nil {
		return err
	}
	page, err := h.csrDetailPage(c, kind, r.Current, csrObject(r.Current))
	if err != nil {
		return err
	}
	page.Chrome.Banners = append(page.Chrome.Banners, model.Banner{
		Tone: model.ToneError, Title: "Nothing was decided",
		Message: csrReplacedText + " What follows is the request now named " + r.Name + ".",
		TestID:  "csr-replaced",
	})
	return render(c, http.StatusConflict, pages.CSRDetail(page))
}
