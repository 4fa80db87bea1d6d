package csrs

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// csrSANs answers the SANs that a queue row leaves out behind "N more"
// (GET /csrs/:name/sans?uid=), fetched when the row's disclosure opens: the
// queue's first page stays small even when it holds many 200-SAN requests.
// The row names the request it showed by UID; a request created again under
// the same name since is said to be another request, never listed as the
// row's. Followed without htmx (a plain link), it goes to the request's page,
// which lists every SAN.
func (h *Handlers) csrSANs(c echo.Context) error {
	name := c.Param("name")
	if !page.FragmentWanted(c) {
		return c.Redirect(http.StatusSeeOther, urls.CSR(name))
	}
	_, obj, err := h.csrShown(c, name)
	if err != nil {
		return err
	}
	if uid := c.QueryParam("uid"); uid != "" && uid != string(obj.UID) {
		return page.Render(c, http.StatusOK, pages.CSRMoreSANsReplaced(urls.CSR(name)))
	}
	req, err := h.d.Queue.Decode(obj.Spec.Request)
	if err != nil {
		// The row said "N more" of a request that decoded; one under this
		// name that does not is another request.
		return page.Render(c, http.StatusOK, pages.CSRMoreSANsReplaced(urls.CSR(name)))
	}
	return page.Render(c, http.StatusOK, pages.CSRMoreSANs(present.MoreSANs(req)))
}
