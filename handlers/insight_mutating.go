package handlers

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// readOnlyKinds are shown but never edited through the console: no New, Edit or
// Delete control, and the editor routes answer 404 for them.
var readOnlyKinds = map[kube.KindID]bool{kube.MutatingWebhooks: true}

// editable reports whether the console offers the editor for kind id.
func editable(id kube.KindID) bool { return !readOnlyKinds[id] }

// mutatingWebhookDetail shows a MutatingWebhookConfiguration with the Services
// its webhooks call looked up, as the validating page does.
func (h *Handlers) mutatingWebhookDetail(c echo.Context, name string, now time.Time) (model.DetailPage, error) {
	cfg, err := h.deps.Cluster.MutatingWebhook(name)
	if err != nil {
		return model.DetailPage{}, err
	}
	return present.MutatingWebhookDetail(cfg, h.hookBackends(c.Request().Context(), admission.FromMutating(cfg).Hooks), now), nil
}

// hookBackends looks up each distinct Service the hooks call (one GET and one
// EndpointSlice LIST each), for either kind of webhook.
func (h *Handlers) hookBackends(ctx context.Context, hooks []admission.Hook) present.WebhookBackends {
	if h.deps.Lookup == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	out := present.WebhookBackends{}
	for _, w := range hooks {
		s := w.ServiceRef()
		if s == nil {
			continue
		}
		key := admission.BackendKey{Namespace: s.Namespace, Name: s.Name}
		if _, done := out[key]; done {
			continue
		}
		out[key] = h.backends.get(ctx, key, h.backend)
	}
	return out
}
