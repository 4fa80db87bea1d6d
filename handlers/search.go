package handlers

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// search finds objects by name across every kind, from the cache. Each kind
// is searched only if the signed-in user may list it, the same check the list
// pages make, so the search never reveals names a list page would not.
func (h *Handlers) search(c echo.Context) error {
	q := present.ParseSearchQuery(c.QueryParams())
	var sources []present.SearchSource
	if q != "" {
		for _, st := range h.deps.Cluster.Statuses() {
			sources = append(sources, h.searchSource(c, st.Kind))
		}
	}
	p := present.Search(q, sources)
	title := "Search"
	if q != "" {
		title = "Search: " + q
	}
	p.Chrome = h.chrome(c, title, "", model.Crumb{Label: "Search"})
	p.Chrome.Search = q
	return render(c, http.StatusOK, pages.Search(p))
}

func (h *Handlers) searchSource(c echo.Context, k kube.Kind) present.SearchSource {
	s := present.SearchSource{KindID: string(k.ID), Title: k.Title}
	if !h.mayList(c, k) {
		s.Forbidden = true
		return s
	}
	names, err := kindNames(h.deps.Cluster, k.ID)
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

// kindNames lists the names of one kind's objects in the cache.
func kindNames(cl Cluster, id kube.KindID) ([]string, error) {
	return names(kindObjects(cl, id))
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
