package handlers

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// crdDetail shows a CRD with how many custom resources it holds (one
// metadata-only LIST of one item, as the user; the API server reports the
// rest in remainingItemCount) and a link to their table. Its versions table
// counts each schema's fields: the schemas are decoded.
func (h *Handlers) crdDetail(c echo.Context, name string, now time.Time) (model.DetailPage, error) {
	crd, err := h.deps.Cluster.CRDWithSchemas(name)
	if err != nil {
		return model.DetailPage{}, err
	}
	p := present.CRDDetail(crd, now)
	h.addConversionBackend(c.Request().Context(), &p, crd) // insight_crd_conversion.go
	p.Insights = append(p.Insights, h.crdInstancesInsight(c.Request().Context(), crd))
	return p, nil
}

func (h *Handlers) crdInstancesInsight(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) model.Insight {
	in := model.Insight{Title: "Objects", TestID: "crd-instances",
		Intro: "The " + crd.Spec.Names.Kind + " objects this CRD defines, counted with your identity."}
	count := model.Rich{Text: "not counted"}
	if h.deps.Editor != nil {
		ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
		defer cancel()
		n, err := h.deps.Editor.CountCustomResources(ctx, crdObject(crd))
		if err != nil {
			count.Text = "not counted: " + lookupErr(err).Error()
		} else {
			count.Text = countText(n)
		}
	}
	in.Fields = []model.RichField{
		{Label: "Count", Value: count, Hint: "Deleting the CRD deletes all of them."},
		{Label: "List", Value: model.Rich{Text: "Show " + crd.Spec.Names.Kind + " objects", Href: urls.CRInstances(crd.Name)},
			Hint: "The API server's table, with the CRD's printer columns."},
	}
	return in
}
