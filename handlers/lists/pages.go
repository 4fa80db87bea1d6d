package lists

import (
	"errors"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/labstack/echo/v4"

	handlerpage "github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

func (h *Handlers) list(c echo.Context) error {
	kind, kp, err := h.kindFor(c)
	if err != nil {
		return err
	}
	chrome := h.d.Chrome(c, kind.Title, kind.ID, model.Crumb{Label: kind.Title})
	q := handlerpage.ParseListQuery(c.QueryParams())
	q.LintErr = present.LintFilterError(string(kind.ID), q.Lint)
	status := http.StatusOK
	var page model.ListPage
	if !handlerpage.MayListKind(c) { // kindAccess (access.go)
		page, status = model.ListPage{Forbidden: true}, http.StatusForbidden
		chrome.Banners = append(chrome.Banners, handlerpage.ForbiddenBanner(kind, nil))
	} else {
		page, err = kp.List(h.d.Cluster, q, time.Now())
		switch {
		case apierrors.IsForbidden(err):
			page, status = model.ListPage{Forbidden: true}, http.StatusForbidden
			chrome.Banners = append(chrome.Banners, handlerpage.ForbiddenBanner(kind, err))
		case errors.Is(err, kube.ErrNotServed):
			// Not an error of the console's: the API server lacks the kind
			// (an older server, or the CRD of the console's own kind not
			// installed), which the page says instead of failing.
			page = model.ListPage{Empty: "No " + kind.Title + ": " + handlerpage.NotServed(kind) + "."}
			chrome.Banners = append(chrome.Banners, model.Banner{Tone: model.ToneWarning, Title: "Not served",
				Message: kind.Title + " are " + handlerpage.NotServed(kind) + ", so there is nothing to list. " + handlerpage.NotServedHint(kind),
				TestID:  "banner-not-served"})
		case errors.Is(err, kube.ErrNotSynced):
			page, status = model.ListPage{Empty: "Loading " + kind.Title + "…"}, http.StatusServiceUnavailable
			c.Response().Header().Set("Retry-After", "2")
		case err != nil:
			return err
		}
	}
	page.Chrome, page.KindID, page.Title, page.Singular, page.Action = chrome, string(kind.ID), kind.Title, kind.Singular, urls.List(kind.ID)
	status = handlerpage.SelectorStatus(&page, q, status) // handlers/page/list_selector.go
	status = handlerpage.LintStatus(&page, q, status)     // handlers/page/list_lint.go
	page.NewHref = h.creating().NewHref(c, kind.ID)       // handlers/page/list_new.go
	page.CleanupHref = h.d.Cleanup.Href(c, kind.ID)
	h.addTicks(c, &page, kind.ID) // ticks.go
	if listMetrics := h.d.Hooks(kind.ID).ListMetrics; listMetrics != nil && !page.Forbidden {
		listMetrics(c, kind.ID, &page) // the API server's own numbers, as the user may see them (handlers' kind_hooks.go)
	}
	return handlerpage.RenderPage(c, status, pages.List(page), pages.ListTable(page))
}

// Detail serves the detail page of the :kind and :name parameters; the
// FlowSchema overview serves it for a FlowSchema named "classify".
func (h *Handlers) Detail(c echo.Context) error {
	kind, kp, err := h.kindFor(c)
	if err != nil {
		return err
	}
	hooks := h.d.Hooks(kind.ID) // handlers' kind_hooks.go
	if hooks.Page != nil {
		return hooks.Page(c)
	}
	name := c.Param("name")
	if h.d.MarkLive != nil {
		h.d.MarkLive(c, kind.ID) // before the page reads the object (handlers/live, Chrome)
	}
	var page model.DetailPage
	if hooks.Detail != nil { // with its lookups as the user
		page, err = hooks.Detail(c, name, time.Now())
	} else {
		page, err = kp.Detail(h.d.Cluster, name, time.Now())
	}
	if err != nil {
		return err
	}
	// handlers/page/detail_yaml.go
	if err := handlerpage.SetCachedYAML(&page, h.d.Cluster, kind.ID, name); err != nil {
		return err
	}
	page.Chrome = h.d.Chrome(c, name, kind.ID,
		model.Crumb{Label: kind.Title, Href: urls.List(kind.ID)}, model.Crumb{Label: name})
	page.MayUpdate, page.MayDelete = h.d.MayChange(c, kind, name)
	if hooks.DetailMetrics != nil {
		hooks.DetailMetrics(c, kind.ID, name, &page)
	}
	if hooks.DetailHistory != nil {
		hooks.DetailHistory(c, name, &page)
	}
	return handlerpage.Render(c, http.StatusOK, pages.Detail(page))
}

// creating is what a list page's "New" button depends on (handlers/page/list_new.go).
func (h *Handlers) creating() handlerpage.Creating {
	return handlerpage.Creating{Log: h.d.Log, Cluster: h.d.Cluster, Access: h.d.Access, ReadOnly: h.d.ReadOnly}
}

// objectYAML serves GET /:kind/:name/yaml: an object's YAML from the cache, as
// the fragment a detail page's YAML disclosure loads (htmx), or as plain text
// (the link for a browser without script).
func (h *Handlers) objectYAML(c echo.Context) error {
	kind, _, err := h.kindFor(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	obj, err := h.d.Cluster.Object(kind.ID, name)
	if err != nil {
		return err
	}
	y, err := kube.YAML(obj)
	if err != nil {
		return err
	}
	if handlerpage.FragmentWanted(c) {
		return handlerpage.Render(c, http.StatusOK, pages.YAMLFragment(y, handlerpage.YAMLNote(y)))
	}
	if note := handlerpage.YAMLNote(y); note != "" {
		y = "# " + note + "\n" + y
	}
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", []byte(y))
}
