package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// newHref is the address of the create page of kind id for a list page's
// "New" button, or "" when there is no button: in read-only mode, or when the
// user may not create objects of the kind (access review; a failed review
// hides the button, the server decides anyway).
func (h *Handlers) newHref(c echo.Context, id kube.KindID) string {
	if h.deps.ReadOnly || h.deps.Access == nil || isHTMX(c) || !kinds.Editable(id) {
		return ""
	}
	k, ok := h.deps.Cluster.Kind(id)
	if !ok {
		return ""
	}
	can, err := h.deps.Access.Can(c.Request().Context(), "create", k.Group, k.Resource, "", "")
	if err != nil {
		h.deps.Log.Warn("access review failed", "check", "create "+string(id), "err", err)
		return ""
	}
	if !can {
		return ""
	}
	return urls.New(id)
}
