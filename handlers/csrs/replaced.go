package csrs

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// csrReplaced answers a decision the API server refused because the CSR under
// the name is no longer the one reviewed: 409, nothing written, and the new
// request laid out as the detail page does (from the live object DecideCSR
// read, since the cache may not have seen it yet), with its own buttons.
func (h *Handlers) csrReplaced(c echo.Context, r *kube.ReplacedError) error {
	kind, err := h.csrKind()
	if err != nil {
		return err
	}
	p, err := h.csrDetailPage(c, kind, r.Current, csr.Typed(r.Current))
	if err != nil {
		return err
	}
	p.Chrome.Banners = append(p.Chrome.Banners, model.Banner{
		Tone: model.ToneError, Title: "Nothing was decided",
		Message: ReplacedText + " What follows is the request now named " + r.Name + ".",
		TestID:  "csr-replaced",
	})
	return page.Render(c, http.StatusConflict, pages.CSRDetail(p))
}
