package csrs

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// csrNodeCheck compares a kubelet-serving CSR's DNS names and IPs with its
// Node's addresses, read as the user (GET /csrs/:name/node-check). The detail
// page loads it after itself (htmx): the Node GET costs as much as the page,
// and only this part needs it. Followed as a plain link (no JavaScript) it
// answers the whole detail page with the comparison in place.
func (h *Handlers) csrNodeCheck(c echo.Context) error {
	name := c.Param("name")
	kind, obj, err := h.csrShown(c, name)
	if err != nil {
		return err
	}
	env := h.csrDetailChecksEnv(c, obj)
	if !page.FragmentWanted(c) {
		obj = h.detailWithCertificate(c, obj) // the whole page shows it (certificate.go)
	}
	full := present.CSRDetailPage(obj, h.d.Queue.Storms(), env, time.Now())
	if page.FragmentWanted(c) {
		r := model.CSRNodeResult{Node: h.kubeletServingNode(obj)}
		for _, f := range full.Findings {
			if strings.HasPrefix(f.Check, "node-") {
				r.Findings = append(r.Findings, f)
			}
		}
		return page.Render(c, http.StatusOK, pages.CSRNodeCheck(r))
	}
	raw, err := h.d.Cluster.Object(kind.ID, name)
	if err != nil {
		return err
	}
	p, err := h.csrDetailLayout(c, kind, obj, raw, full)
	if err != nil {
		return err
	}
	return page.Render(c, http.StatusOK, pages.CSRDetail(p))
}
