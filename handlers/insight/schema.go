package insight

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// crdSchema shows one version's schema of a CRD from the cache (decoded from
// its packed form, once per view), focused on the field in the path query
// parameter.
func (h *Handlers) crdSchema(c echo.Context) error {
	kind, ok := h.d.Cluster.Kind(kube.CRDs)
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, "clusterdesk does not show CustomResourceDefinitions.")
	}
	name, version := c.Param("name"), c.Param("version")
	obj, err := h.d.Cluster.CRDWithSchemas(name)
	if err != nil {
		return err
	}
	p, err := present.CRDSchema(obj, version, c.QueryParam("path"))
	if nf := (*present.SchemaNotFound)(nil); errors.As(err, &nf) {
		return echo.NewHTTPError(http.StatusNotFound, nf.Reason)
	} else if err != nil {
		return err
	}
	p.Chrome = h.d.Chrome(c, name+" "+version+" schema", kind.ID,
		model.Crumb{Label: kind.Title, Href: urls.List(kind.ID)},
		model.Crumb{Label: name, Href: urls.Object(kind.ID, name)},
		model.Crumb{Label: "schema " + version})
	return page.Render(c, http.StatusOK, pages.Schema(p))
}
