package handlers

import (
	"context"
	"errors"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

func kindResource(k kube.Kind) schema.GroupResource {
	return schema.GroupResource{Group: k.Group, Resource: k.Resource}
}

// errorHandler is echo's one HTTPErrorHandler: it logs server faults and renders
// the error page (with the nav when the browser is signed in).
func (h *Handlers) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	// The browser went away (a navigation, an aborted htmx request): nobody is
	// left to read a page, and it is not a server fault.
	if errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil {
		return
	}
	p := page.ErrorPage(err) // handlers/page/errors.go
	if p.Status >= 500 {
		h.deps.Log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	if _, signedIn := c.Get(sessionContextKey).(string); signedIn {
		p.Chrome = h.pageChrome.Build(c, p.Title, "")
	} else {
		p.Chrome = model.Chrome{Title: p.Title}
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(p.Status)
		return
	}
	if rerr := render(c, p.Status, pages.Error(p)); rerr != nil {
		h.deps.Log.Error("rendering the error page failed", "err", rerr)
		_ = c.String(p.Status, p.Title+": "+p.Message)
	}
}
