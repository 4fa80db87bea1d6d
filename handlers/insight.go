package handlers

import (
	"fmt"
	"time"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/backends"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/usage"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// lookupTimeout bounds the direct lookups of one page view: a slow API server
// makes the page say "not checked", never hang.
const lookupTimeout = 5 * time.Second

// withLive adds a detail builder that may do direct lookups.
// detailPage builds a detail page, with its lookups when the kind has any.
func (h *Handlers) detailPage(c echo.Context, kp kindPages, name string, now time.Time) (model.DetailPage, error) {
	if kp.live != nil {
		return kp.live(h, c, name, now)
	}
	return kp.detail(h.deps.Cluster, name, now)
}

// webhookDetail shows a ValidatingWebhookConfiguration with the Services its
// webhooks call looked up (backends.Finder).
func (h *Handlers) webhookDetail(c echo.Context, name string, now time.Time) (model.DetailPage, error) {
	cfg, err := h.deps.Cluster.Webhook(name)
	if err != nil {
		return model.DetailPage{}, err
	}
	return present.WebhookDetail(cfg, h.backendFinder().Hooks(c.Request().Context(), admission.FromValidating(cfg).Hooks), now), nil
}

// backendFinder looks up webhook Services as the signed-in user, through the
// per-user cache.
func (h *Handlers) backendFinder() backends.Finder {
	return backends.Finder{Lookup: h.deps.Lookup, Cache: h.backends, Log: h.deps.Log, Timeout: lookupTimeout}
}

// csiDriverDetail shows a CSIDriver with the objects that use it, counted
// from LISTs made when the page is viewed (usage.Count).
func (h *Handlers) csiDriverDetail(c echo.Context, name string, now time.Time) (model.DetailPage, error) {
	d, err := h.deps.Cluster.CSIDriver(name)
	if err != nil {
		return model.DetailPage{}, err
	}
	var users *usage.Driver
	if h.deps.Lookup != nil {
		users = usage.Count(c.Request().Context(), h.deps.Lookup, d.Name, lookupTimeout)
	}
	return present.CSIDriverDetail(d, users, now), nil
}

// lookupErr words a failed lookup for the page: a refusal names the cause.
func lookupErr(err error) error {
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("your identity may not list them. The API server said: %w", err)
	}
	return err
}
