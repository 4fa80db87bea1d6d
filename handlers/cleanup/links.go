package cleanup

import (
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// The lists' ways into a cleanup: their "Clean up…" links and, for users who
// may delete, their tick boxes' "Delete selected…" (handlers' list_ticks.go).

// Href is a list page's "Clean up…" link: the preview of deleting what the
// view's label selector (selector=, the parameter every list takes) matches.
// "" in read-only mode, for read-only kinds and for htmx fragments.
func (h *Handlers) Href(c echo.Context, id kube.KindID) string {
	if h.d.ReadOnly || page.IsHTMX(c) || !kinds.Editable(id) {
		return ""
	}
	if _, offered := kinds.Candidates(h.d.Cluster, id); !offered {
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

// CSRHref is the CSR queue's "Clean up…" link, carrying its state tab,
// signer and age filters (and selector), and where "Delete selected" posts.
func (h *Handlers) CSRHref(c echo.Context, q csrqueue.Query) (href, ticked string) {
	if h.Href(c, kube.CSRs) == "" {
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

// MayDeleteAll reports whether the user may delete any object of kind id (an
// access review, cached): it only decides whether the CSR queue and the lists
// offer tick boxes for deletion (handlers' list_ticks.go); the preview's dry
// run and the deletion ask the API server.
func (h *Handlers) MayDeleteAll(c echo.Context, id kube.KindID) bool {
	if !kinds.Editable(id) {
		return false
	}
	k, ok := h.d.Cluster.Kind(id)
	return ok && h.MayDelete(c, k)
}

// MayDelete reports whether the user may delete k's objects in every
// namespace (an access review, cached); never in read-only mode. A page of a
// CRD's objects ticks every row then (handlers/editor/ticks.go).
func (h *Handlers) MayDelete(c echo.Context, k kube.Kind) bool {
	if h.d.ReadOnly || h.d.Access == nil {
		return false
	}
	can, err := h.d.Access.Can(c.Request().Context(), "delete", k.Group, k.Resource, "", "")
	return err == nil && can
}
