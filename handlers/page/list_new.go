package page

import (
	"log/slog"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// Creating is what a list page's "New" button depends on: the console's
// mode and the user's access, asked through Access (nil: no button).
type Creating struct {
	Log      *slog.Logger
	Cluster  ports.Cluster
	Access   ports.Access
	ReadOnly bool
}

// NewHref is the address of the create page of kind id for a list page's
// "New" button, or "" when there is no button: in read-only mode, or when the
// user may not create objects of the kind (access review; a failed review
// hides the button, the server decides anyway).
func (d Creating) NewHref(c echo.Context, id kube.KindID) string {
	if d.ReadOnly || d.Access == nil || IsHTMX(c) || !kinds.Editable(id) {
		return ""
	}
	k, ok := d.Cluster.Kind(id)
	if !ok {
		return ""
	}
	can, err := d.Access.Can(c.Request().Context(), "create", k.Group, k.Resource, "", "")
	if err != nil {
		d.Log.Warn("access review failed", "check", "create "+string(id), "err", err)
		return ""
	}
	if !can {
		return ""
	}
	return urls.New(id)
}
