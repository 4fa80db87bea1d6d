package insight

import (
	"context"
	"fmt"
	"time"

	"github.com/labstack/echo/v4"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/backends"
	"github.com/clusterdesk/clusterdesk/internal/crd"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/internal/usage"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The detail pages that add direct lookups as the user to what the shared
// cache holds; the handlers root (kind_hooks.go, the live hook) builds its
// kinds' detail pages with them. Each lookup is bounded by LookupTimeout: a
// slow API server makes the page say "not checked", never hang.

// WebhookDetail shows a ValidatingWebhookConfiguration with the Services its
// webhooks call looked up (backends.Finder).
func (h *Handlers) WebhookDetail(c echo.Context, name string, now time.Time) (model.DetailPage, error) {
	cfg, err := h.d.Cluster.Webhook(name)
	if err != nil {
		return model.DetailPage{}, err
	}
	return present.WebhookDetail(cfg, h.backendFinder().Hooks(c.Request().Context(), admission.FromValidating(cfg).Hooks), now), nil
}

// MutatingWebhookDetail shows a MutatingWebhookConfiguration with the Services
// its webhooks call looked up, as the validating page does.
func (h *Handlers) MutatingWebhookDetail(c echo.Context, name string, now time.Time) (model.DetailPage, error) {
	cfg, err := h.d.Cluster.MutatingWebhook(name)
	if err != nil {
		return model.DetailPage{}, err
	}
	return present.MutatingWebhookDetail(cfg, h.backendFinder().Hooks(c.Request().Context(), admission.FromMutating(cfg).Hooks), now), nil
}

// backendFinder looks up webhook Services as the signed-in user, through the
// per-user cache.
func (h *Handlers) backendFinder() backends.Finder {
	return backends.Finder{Lookup: h.d.Lookup, Cache: h.backends, Log: h.d.Log, Timeout: h.d.LookupTimeout}
}

// CSIDriverDetail shows a CSIDriver with the objects that use it, counted
// from LISTs made when the page is viewed (usage.Count).
func (h *Handlers) CSIDriverDetail(c echo.Context, name string, now time.Time) (model.DetailPage, error) {
	d, err := h.d.Cluster.CSIDriver(name)
	if err != nil {
		return model.DetailPage{}, err
	}
	var users *usage.Driver
	if h.d.Lookup != nil {
		users = usage.Count(c.Request().Context(), h.d.Lookup, d.Name, h.d.LookupTimeout)
	}
	return present.CSIDriverDetail(d, users, now), nil
}

// CRDDetail shows a CRD with how many custom resources it holds (one
// metadata-only LIST of one item, as the user; the API server reports the
// rest in remainingItemCount) and a link to their table. Its versions table
// counts each schema's fields: the schemas are decoded once per version of
// the CRD (h.fields), the page is built from the cached object.
func (h *Handlers) CRDDetail(c echo.Context, name string, now time.Time) (model.DetailPage, error) {
	def, err := h.d.Cluster.CRD(name)
	if err != nil {
		return model.DetailPage{}, err
	}
	fields, ok := h.fields.get(def)
	if !ok {
		if def, err = h.d.Cluster.CRDWithSchemas(name); err != nil {
			return model.DetailPage{}, err
		}
		h.fields.put(def)
		fields, _ = h.fields.get(def)
	}
	p := present.CRDDetailCounted(def, fields, now)
	h.addConversionBackend(c.Request().Context(), &p, def)
	p.Insights = append(p.Insights, h.crdInstancesInsight(c.Request().Context(), def))
	return p, nil
}

// addConversionBackend looks up the Service of a CRD's conversion webhook (one
// GET and one EndpointSlice LIST, as the user, when the page is opened) and
// puts what it found on the page, as the webhook pages do.
func (h *Handlers) addConversionBackend(ctx context.Context, p *model.DetailPage, c *apiextensionsv1.CustomResourceDefinition) {
	key := crd.ConversionService(c)
	if key == nil {
		return
	}
	if b, ok := h.backendFinder().Service(ctx, *key); ok {
		present.AddConversionBackend(p, c, b)
	}
}

func (h *Handlers) crdInstancesInsight(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) model.Insight {
	in := model.Insight{Title: "Objects", TestID: "crd-instances",
		Intro: "The " + crd.Spec.Names.Kind + " objects this CRD defines, counted with your identity."}
	count := model.Rich{Text: "not counted"}
	if h.d.Editor != nil {
		ctx, cancel := context.WithTimeout(ctx, h.d.LookupTimeout)
		defer cancel()
		n, err := h.d.Editor.CountCustomResources(ctx, page.CRDObject(crd))
		if err != nil {
			count.Text = "not counted: " + lookupErr(err).Error()
		} else {
			count.Text = page.CRCountText(n)
		}
	}
	in.Fields = []model.RichField{
		{Label: "Count", Value: count, Hint: "Deleting the CRD deletes all of them."},
		{Label: "List", Value: model.Rich{Text: "Show " + crd.Spec.Names.Kind + " objects", Href: urls.CRInstances(crd.Name)},
			Hint: "The API server's table, with the CRD's printer columns."},
	}
	return in
}

// lookupErr words a failed lookup for the page: a refusal names the cause.
func lookupErr(err error) error {
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("your identity may not list them. The API server said: %w", err)
	}
	return err
}
