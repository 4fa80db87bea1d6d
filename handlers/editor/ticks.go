package editor

import (
	"context"
	"encoding/json"

	"github.com/labstack/echo/v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/cleanup"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// NamespaceAccess answers whether the signed-in user may do something to a
// namespaced resource's objects in one namespace (kube.UserAccess). Access
// implementations without it give tick boxes only to who may delete in
// every namespace.
type NamespaceAccess interface {
	CanIn(ctx context.Context, verb, namespace, group, resource string) (bool, error)
}

// maxTickNamespaces bounds the access reviews one page of a CRD's objects
// spends on its rows' namespaces (a page holds up to maxInstancesPerPage
// rows); rows of further namespaces get no box, and "Clean up…" still
// previews them.
const maxTickNamespaces = 50

// tickOf decides the tick boxes on a page of a CRD's objects: a box on
// every row for who may delete the kind's objects in every namespace; for a
// namespaced kind, else, a box on the rows of the namespaces where an access
// review allows delete (a namespace admin's RoleBinding). nil when no row
// gets one (the page then has no tick column). The preview's dry run and
// the deletion still ask the API server object by object.
func (h *Handlers) tickOf(c echo.Context, k kube.Kind, namespaced bool, table *metav1.Table) func(namespace, name, uid string) string {
	tick := func(namespace, name, uid string) string {
		return cleanup.Ref{Namespace: namespace, Name: name, UID: uid}.Value()
	}
	if h.d.Cleanup.MayDelete(c, k) {
		return tick
	}
	na, ok := h.d.Access.(NamespaceAccess)
	if !namespaced || !ok || h.d.ReadOnly {
		return nil
	}
	allowed := map[string]bool{}
	some := false
	for _, ns := range tableNamespaces(table, maxTickNamespaces) {
		can, err := na.CanIn(c.Request().Context(), "delete", ns, k.Group, k.Resource)
		if err != nil {
			h.d.Log.Warn("access review failed", "verb", "delete", "resource", k.Resource, "namespace", ns, "err", err)
		}
		allowed[ns] = err == nil && can
		some = some || allowed[ns]
	}
	if !some {
		return nil
	}
	return func(namespace, name, uid string) string {
		if !allowed[namespace] {
			return ""
		}
		return tick(namespace, name, uid)
	}
}

// tableNamespaces is the distinct namespaces of a server-side table's rows,
// in order, at most max of them.
func tableNamespaces(t *metav1.Table, max int) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range t.Rows {
		var m metav1.PartialObjectMetadata
		if len(r.Object.Raw) == 0 || json.Unmarshal(r.Object.Raw, &m) != nil || m.Namespace == "" || seen[m.Namespace] {
			continue
		}
		if len(out) == max {
			break
		}
		seen[m.Namespace] = true
		out = append(out, m.Namespace)
	}
	return out
}
