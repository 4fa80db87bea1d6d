package handlers

import (
	"context"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

func kindResource(k kube.Kind) schema.GroupResource {
	return schema.GroupResource{Group: k.Group, Resource: k.Resource}
}

// errorPage turns any error into a status and a page. API server errors keep
// their own status, message and field causes; they are matched by type
// (apierrors), never by string.
func errorPage(err error) model.ErrorPage {
	var he *echo.HTTPError
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &he):
		msg, _ := he.Message.(string)
		if msg == "" {
			msg = http.StatusText(he.Code)
		}
		return model.ErrorPage{Status: he.Code, Title: http.StatusText(he.Code), Message: msg}
	case errors.As(err, &status):
		st := status.Status()
		p := model.ErrorPage{Status: int(st.Code), Title: http.StatusText(int(st.Code)), Message: st.Message}
		if p.Status == 0 {
			p.Status = http.StatusInternalServerError
		}
		if apierrors.IsNotFound(err) {
			p.Title = "Not found"
		}
		if st.Details != nil {
			for _, c := range st.Details.Causes {
				cause := c.Message
				if c.Field != "" {
					cause = c.Field + ": " + cause
				}
				p.Causes = append(p.Causes, cause)
			}
		}
		return p
	default:
		if p, ok := unreachablePage(err); ok {
			return p
		}
		return model.ErrorPage{Status: http.StatusInternalServerError, Title: "Internal error", Message: err.Error()}
	}
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
	p := errorPage(err)
	if p.Status >= 500 {
		h.deps.Log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	if _, signedIn := c.Get(sessionContextKey).(string); signedIn {
		p.Chrome = h.chrome(c, p.Title, "")
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
