package flowschemas

import (
	"slices"

	"github.com/labstack/echo/v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// webhookConfig reads a webhook configuration from the shared cache.
func webhookConfig(cl ports.Cluster, id kube.KindID, name string) (admission.Config, bool) {
	obj, err := cl.Object(id, name)
	if err != nil {
		return admission.Config{}, false
	}
	switch o := obj.(type) {
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		return admission.FromValidating(o), true
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		return admission.FromMutating(o), true
	}
	return admission.Config{}, false
}

// WebhookListHealth adds a health column to a webhook configuration list
// (only the rows shown), with the banner saying where it comes from. Like
// PriorityLevelListLoad it decorates live rows too.
func WebhookListHealth(cl ports.Cluster, id kube.KindID, page *model.ListPage, st present.APFLoadState) {
	banner := st.LoadBanner()
	banner.Title = "Webhook health"
	page.Chrome.Banners = append(page.Chrome.Banners, banner)
	if !st.Allowed {
		return
	}
	configs := make(map[string]admission.Config, len(page.Rows))
	if st.Load != nil {
		for _, r := range page.Rows {
			if cfg, ok := webhookConfig(cl, id, r.Name); ok {
				configs[r.Name] = cfg
			}
		}
	}
	present.AddWebhookHealth(page, configs, st.Load)
	page.LoadFollow = st.Follow
}

// AddDetailWebhookHealth puts each webhook's health first among the
// configuration's insights.
func (h *Handlers) AddDetailWebhookHealth(c echo.Context, id kube.KindID, name string, page *model.DetailPage) {
	cfg, found := webhookConfig(h.d.Cluster, id, name)
	if !found {
		return
	}
	st, ok := h.Load(c)
	if !ok {
		return
	}
	page.Insights = slices.Insert(page.Insights, 0, present.WebhookHealthInsight(cfg, st))
}
