package handlers

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// mutatingWebhookDetail shows a MutatingWebhookConfiguration with the Services
// its webhooks call looked up, as the validating page does.
func (h *Handlers) mutatingWebhookDetail(c echo.Context, name string, now time.Time) (model.DetailPage, error) {
	cfg, err := h.deps.Cluster.MutatingWebhook(name)
	if err != nil {
		return model.DetailPage{}, err
	}
	return present.MutatingWebhookDetail(cfg, h.backendFinder().Hooks(c.Request().Context(), admission.FromMutating(cfg).Hooks), now), nil
}
