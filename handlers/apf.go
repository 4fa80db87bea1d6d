package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// flowSchemaKind resolves the FlowSchema kind and checks the user may list it.
// A forbidden user gets a banner in chrome and ok=false.
func (h *Handlers) flowSchemaKind(c echo.Context, crumbs ...model.Crumb) (kube.Kind, model.Chrome, bool, error) {
	kind, known := h.deps.Cluster.Kind(kube.FlowSchemas)
	if !known {
		return kube.Kind{}, model.Chrome{}, false, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("clusterdesk has no page for %q.", kube.FlowSchemas))
	}
	chrome := h.chrome(c, kind.Title, kind.ID, crumbs...)
	if !mayListKind(c) { // kindAccess (access.go)
		chrome.Banners = append(chrome.Banners, forbiddenBanner(kind, nil))
		return kind, chrome, false, nil
	}
	return kind, chrome, true, nil
}

// apfConfig reads the FlowSchemas and, when the user may read them, the
// priority levels (nil otherwise: the Dangling conditions stand in).
func (h *Handlers) apfConfig(c echo.Context) ([]*flowcontrolv1.FlowSchema, apf.Levels, error) {
	schemas, err := h.deps.Cluster.FlowSchemas()
	if err != nil {
		return nil, nil, err
	}
	plKind, known := h.deps.Cluster.Kind(kube.PriorityLevels)
	if !known || !h.mayList(c, plKind) {
		return schemas, nil, nil
	}
	pls, err := h.deps.Cluster.PriorityLevels()
	if err != nil {
		return schemas, nil, nil
	}
	return schemas, apf.LevelsOf(pls), nil
}

// flowSchemas serves the FlowSchema overview (GET /flowschemas) in evaluation
// order; it replaces the generic list. htmx gets the table fragment.
func (h *Handlers) flowSchemas(c echo.Context) error {
	kind, chrome, ok, err := h.flowSchemaKind(c, model.Crumb{Label: "FlowSchemas"})
	if err != nil {
		return err
	}
	q := present.ParseListQuery(c.QueryParams())
	status := http.StatusOK
	var page model.FlowSchemaListPage
	if !ok {
		page.List, status = model.ListPage{Forbidden: true}, http.StatusForbidden
	} else {
		schemas, levels, err := h.apfConfig(c)
		switch {
		case apierrors.IsForbidden(err):
			page.List, status = model.ListPage{Forbidden: true}, http.StatusForbidden
			chrome.Banners = append(chrome.Banners, forbiddenBanner(kind, err))
		case errors.Is(err, kube.ErrNotSynced):
			page.List, status = model.ListPage{Empty: "Loading " + kind.Title + "…"}, http.StatusServiceUnavailable
			c.Response().Header().Set("Retry-After", "2")
		case err != nil:
			return err
		default:
			page = present.FlowSchemaOverview(schemas, levels, q, time.Now())
			if st, shown := h.apfLoad(c); shown { // apf_load.go
				page.Notes = append(page.Notes, st.LoadBanner())
				if st.Allowed {
					present.AddFlowSchemaLoad(&page, st.Load)
					page.List.LoadFollow = st.Follow
				}
			}
		}
	}
	page.List.Chrome, page.List.KindID, page.List.Title, page.List.Action = chrome, string(kind.ID), kind.Title, urls.List(kind.ID)
	status = selectorStatus(&page.List, q, status) // list_selector.go
	page.ClassifyHref = urls.Classify
	page.List.NewHref = h.newHref(c, kind.ID) // list_new.go
	page.List.CleanupHref = h.cleanupHref(c, kind.ID)
	h.addFlowSchemaTicks(c, &page) // list_ticks.go
	if page.List.NewHref != "" {
		page.NewFormHref = urls.FlowSchemaFormNew // apf_form.go
	}
	return renderPage(c, status, pages.FlowSchemaList(page), pages.FlowSchemaTable(page))
}

// classify serves the request classifier (GET /flowschemas/-/classify): the
// form, and once submitted, where the apiserver would put the request.
func (h *Handlers) classify(c echo.Context) error {
	_, chrome, ok, err := h.flowSchemaKind(c,
		model.Crumb{Label: "FlowSchemas", Href: urls.FlowSchemas}, model.Crumb{Label: "Classify a request"})
	if err != nil {
		return err
	}
	chrome.Title = "Classify a request"
	page := model.ClassifyPage{
		Chrome: chrome, Form: present.NewClassifyForm(), Examples: present.ClassifyExamples(),
		Action: urls.Classify, ListHref: urls.FlowSchemas,
	}
	if f := present.ParseClassifyForm(c.QueryParams()); f.Submitted {
		page.Form = f
	}
	if !ok {
		return render(c, http.StatusForbidden, pages.Classify(page))
	}
	if !page.Form.Submitted {
		return render(c, http.StatusOK, pages.Classify(page))
	}
	req, errs := present.ClassifyRequest(page.Form)
	if len(errs) > 0 {
		page.Errors = errs
		return render(c, http.StatusUnprocessableEntity, pages.Classify(page))
	}
	schemas, levels, err := h.apfConfig(c)
	if errors.Is(err, kube.ErrNotSynced) {
		c.Response().Header().Set("Retry-After", "2")
		page.Notes = append(page.Notes, model.Banner{Tone: model.TonePending, Title: "Loading", Message: "clusterdesk is still reading the FlowSchemas; try again in a moment."})
		return render(c, http.StatusServiceUnavailable, pages.Classify(page))
	}
	if err != nil {
		return err
	}
	if levels == nil {
		page.Notes = append(page.Notes, model.Banner{Tone: model.ToneWarning, Title: "Priority levels unknown",
			Message: "clusterdesk cannot read the PriorityLevelConfigurations as you, so the FlowSchemas' Dangling conditions decide which are skipped, and the priority level's queuing is unknown."})
	}
	res := apf.Classify(schemas, levels, req)
	total := len(apf.Sequence(schemas, levels))
	view := present.ClassifyResultView(res, req, total)
	if st, shown := h.apfLoad(c); shown { // apf_load.go
		if st.Load != nil {
			view.Load, view.LoadBadges = present.ClassifyLoad(view.PriorityLevel, st.Load)
		} else {
			view.Load, view.LoadFollow = st.LoadBanner().Message, st.Follow
		}
	}
	page.Result = &view
	return render(c, http.StatusOK, pages.Classify(page))
}
