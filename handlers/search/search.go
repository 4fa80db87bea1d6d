// Package search is the global search by name across every kind, from the
// shared cache (GET /search). The kinds are the registry's, which the handlers
// package owns and hands over as ports.
package search

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// Deps are the search's ports.
type Deps struct {
	page.Base
	Cluster ports.Cluster
	// MayList answers whether the request's user may list k (the access
	// check of every kind route, handlers/access.go).
	MayList func(c echo.Context, k kube.Kind) bool
}

// Handlers serves the search.
type Handlers struct{ d Deps }

// New builds the search's handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// Register adds the search; its static path wins over /:kind.
func (h *Handlers) Register(e *echo.Echo) {
	e.GET(urls.Search, h.search)
}

// search finds objects by name across every kind, from the cache. Each kind
// is searched only if the signed-in user may list it, the same check the list
// pages make, so the search never reveals names a list page would not.
func (h *Handlers) search(c echo.Context) error {
	q := parseQuery(c.QueryParams())
	var sources []present.SearchSource
	if q != "" {
		for _, st := range h.d.Cluster.Statuses() {
			sources = append(sources, h.searchSource(c, st.Kind))
		}
	}
	p := present.Search(q, sources)
	title := "Search"
	if q != "" {
		title = "Search: " + q
	}
	p.Chrome = h.d.Chrome(c, title, "", model.Crumb{Label: "Search"})
	p.Chrome.Search = q
	return page.Render(c, http.StatusOK, pages.Search(p))
}

func (h *Handlers) searchSource(c echo.Context, k kube.Kind) present.SearchSource {
	s := present.SearchSource{KindID: string(k.ID), Title: k.Title}
	if !h.d.MayList(c, k) {
		s.Forbidden = true
		return s
	}
	names, err := names(kinds.Objects(h.d.Cluster, k.ID))
	switch {
	case apierrors.IsForbidden(err):
		s.Forbidden = true
	case errors.Is(err, kube.ErrNotSynced):
		s.Loading = true
	case err != nil:
		s.Err = err.Error()
	}
	s.Names = names
	return s
}

func names[T metav1.Object](items []T, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for _, o := range items {
		out = append(out, o.GetName())
	}
	return out, nil
}
