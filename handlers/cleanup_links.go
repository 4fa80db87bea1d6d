package handlers

import (
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// cleanupHref is a list page's "Clean up…" link: the preview of deleting what
// the view's label selector (selector=, the parameter every list takes)
// matches. "" in read-only mode, for read-only kinds and for htmx fragments.
func (h *Handlers) cleanupHref(c echo.Context, id kube.KindID) string {
	if h.deps.ReadOnly || isHTMX(c) || !editable(id) || pagesByKind[id].candidates == nil {
		return ""
	}
	q := url.Values{}
	if sel := c.QueryParam("selector"); sel != "" {
		q.Set("selector", sel)
	}
	return urls.WithQuery(urls.Cleanup(id), q)
}

// csrQueueAges maps the queue's "older than" age filters to a cleanup's age;
// "newer than" has no cleanup counterpart (a cleanup removes old requests).
var csrQueueAges = map[string]string{"gt1h": "1h", "gt24h": "1d", "gt7d": "7d"}

// csrCleanupHref is the queue's "Clean up…" link, carrying its state tab,
// signer and age filters (and selector), and where "Delete selected" posts.
func (h *Handlers) csrCleanupHref(c echo.Context, q csrqueue.Query) (href, ticked string) {
	if h.cleanupHref(c, kube.CSRs) == "" {
		return "", ""
	}
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("state", q.State)
	set("signer", q.Signer)
	set("older", csrQueueAges[q.Age])
	set("selector", c.QueryParam("selector"))
	return urls.WithQuery(urls.Cleanup(kube.CSRs), v), urls.Cleanup(kube.CSRs)
}

// mayDeleteAll reports whether the user may delete any object of kind id (an
// access review, cached): it only decides whether the CSR queue and the lists
// offer tick boxes for deletion (list_ticks.go); the preview's dry run and the
// deletion ask the API server.
func (h *Handlers) mayDeleteAll(c echo.Context, id kube.KindID) bool {
	if !editable(id) {
		return false
	}
	k, ok := h.deps.Cluster.Kind(id)
	return ok && h.mayDelete(c, k)
}

// mayDelete reports whether the user may delete k's objects in every
// namespace (an access review, cached); never in read-only mode.
func (h *Handlers) mayDelete(c echo.Context, k kube.Kind) bool {
	if h.deps.ReadOnly || h.deps.Access == nil {
		return false
	}
	can, err := h.deps.Access.Can(c.Request().Context(), "delete", k.Group, k.Resource, "", "")
	return err == nil && can
}
