package handlers

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// serverBefore reads, as the user, the object an update or a server-side
// apply is about to change: the "before" of its audit records. The form's
// base is the browser's word and only drives the diff the user is shown; the
// person being audited must not choose what their change is compared with.
//
// It is read from the API server, not the shared cache: the cache may lag,
// and it keeps a stripped copy (no last-applied annotation, shallow
// managedFields) that would show as a change of its own. One GET per request
// is the price. If the object changed between this read and the write, an
// update fails (it carries the starting resourceVersion) and records no diff;
// a server-side apply carries none, so a change landing in that gap would be
// included in its diff: the API server's audit log stays the authority.
func (h *Handlers) serverBefore(c echo.Context, k kube.Kind, name string) *unstructured.Unstructured {
	obj, err := h.deps.Editor.Get(c.Request().Context(), k, name)
	if err != nil {
		// The write will fail the same way and say why; auditBefore still
		// tries the cache at the starting version.
		return nil
	}
	return obj
}

// from sets the record's "before" to the API server's object, and its starting
// resourceVersion to that object's (for an update the write's precondition
// makes them agree; a server-side apply sends none, so the form's would be
// the browser's word too).
func (r writeRecord) from(obj *unstructured.Unstructured) writeRecord {
	if obj != nil {
		r.From, r.Before = obj, obj.GetResourceVersion()
	}
	return r
}
