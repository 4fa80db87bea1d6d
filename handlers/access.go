package handlers

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// onForbidden says what a kind route does for a user who may not list its kind.
type onForbidden int

const (
	// refuse answers 403 through the error handler before the handler runs:
	// an object's pages and their parts, the editors and every change.
	refuse onForbidden = iota
	// banner runs the handler, which shows its page with a Forbidden banner
	// and 403 (page.MayListKind): the list pages, which say what they hide.
	banner
)

// kindAccess is the access check of every route under a kind (routes.go): it
// asks whether the signed-in user may list the kind id (the :kind parameter
// when id is "") before the handler runs, so no page serves the shared cache,
// which holds what the console may read, to a user RBAC would refuse. An
// unknown kind is a 404. Writes and direct reads go to the API server as the
// user and are checked there as well.
func (h *Handlers) kindAccess(id kube.KindID, mode onForbidden) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			kind, err := h.routeKind(c, id)
			if err != nil {
				return err
			}
			ok := h.rights.MayList(c, kind)
			page.SetMayListKind(c, ok) // what list pages read (page.MayListKind)
			if !ok && mode == refuse {
				return apierrors.NewForbidden(kindResource(kind), c.Param("name"), errors.New("your identity may not read this kind"))
			}
			return next(c)
		}
	}
}

// routeKind is the kind a route is under: id, or the :kind parameter.
func (h *Handlers) routeKind(c echo.Context, id kube.KindID) (kube.Kind, error) {
	if id == "" {
		k, _, err := page.KindFor(c, h.deps.Cluster)
		return k, err
	}
	k, known := h.deps.Cluster.Kind(id)
	if !known {
		return kube.Kind{}, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("clusterdesk has no page for %q.", id))
	}
	return k, nil
}
