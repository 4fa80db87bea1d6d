package page

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// KindFor resolves the :kind path segment to the cluster's kind and its
// declaration, or answers 404.
func KindFor(c echo.Context, cluster ports.Cluster) (kube.Kind, kinds.Kind, error) {
	id := kube.KindID(c.Param("kind"))
	kp, ok := kinds.Of(id)
	kind, known := cluster.Kind(id)
	if !ok || !known {
		return kube.Kind{}, kinds.Kind{}, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("clusterdesk has no page for %q.", c.Param("kind")))
	}
	return kind, kp, nil
}

// EditableKindFor resolves :kind for the editor's and the cleanup's routes:
// a kind the console writes, whose served version it knows.
func EditableKindFor(c echo.Context, cluster ports.Cluster) (kube.Kind, error) {
	k, _, err := KindFor(c, cluster)
	if err == nil && !kinds.Editable(k.ID) {
		err = echo.NewHTTPError(http.StatusNotFound, "clusterdesk shows "+k.Title+" read-only; change them with the tool that installed them.")
	}
	if err == nil && k.Version == "" {
		err = echo.NewHTTPError(http.StatusServiceUnavailable, "clusterdesk does not know yet which version of "+k.Title+" the API server serves; try again in a moment.")
	}
	return k, err
}

// NotServed says why the API server does not serve a kind: a custom resource
// of the console's own is not installed, a built-in kind is too new for it.
func NotServed(k kube.Kind) string {
	if k.ID == kube.CSRApprovalPolicies {
		return "not installed in this cluster"
	}
	return "not served by this API server"
}

// NotServedHint is what to do about it.
func NotServedHint(k kube.Kind) string {
	if k.ID == kube.CSRApprovalPolicies {
		return "Their CRD is deploy/base/csrapprovalpolicies.yaml; once it is created they appear here, without a restart."
	}
	return "Newer Kubernetes versions serve them."
}
