package handlers

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
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

// mutatingConfigs returns the cached MutatingWebhookConfigurations for the
// interception form, or a note saying why they are left out (the user may not
// list them, or the cache cannot serve them).
func (h *Handlers) mutatingConfigs(c echo.Context) ([]admission.Config, string) {
	kind, ok := h.deps.Cluster.Kind(kube.MutatingWebhooks)
	if !ok {
		return nil, ""
	}
	if !h.mayList(c, kind) {
		return nil, "Your Kubernetes identity may not list MutatingWebhookConfigurations: only validating webhooks are shown."
	}
	list, err := h.deps.Cluster.MutatingWebhooks()
	if err != nil {
		return nil, "MutatingWebhookConfigurations are left out: " + err.Error()
	}
	out := make([]admission.Config, 0, len(list))
	for _, m := range list {
		out = append(out, admission.FromMutating(m))
	}
	return out, ""
}

// served reports whether discovery lists r.
func served(lists []*metav1.APIResourceList, r admission.GVR) bool {
	gv := r.Version
	if r.Group != "" {
		gv = r.Group + "/" + r.Version
	}
	for _, l := range lists {
		if l == nil || l.GroupVersion != gv {
			continue
		}
		for _, res := range l.APIResources {
			if res.Name == r.Resource {
				return true
			}
		}
	}
	return false
}
