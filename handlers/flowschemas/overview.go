package flowschemas

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
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
	kind, known := h.d.Cluster.Kind(kube.FlowSchemas)
	if !known {
		return kube.Kind{}, model.Chrome{}, false, echo.NewHTTPError(http.StatusNotFound, fmt.Sprintf("clusterdesk has no page for %q.", kube.FlowSchemas))
	}
	chrome := h.d.Chrome(c, kind.Title, kind.ID, crumbs...)
	if !page.MayListKind(c) { // the route's kindAccess (handlers/access.go)
		chrome.Banners = append(chrome.Banners, page.ForbiddenBanner(kind, nil))
		return kind, chrome, false, nil
	}
	return kind, chrome, true, nil
}

// apfConfig reads the FlowSchemas and, when the user may read them, the
// priority levels (nil otherwise: the Dangling conditions stand in).
func (h *Handlers) apfConfig(c echo.Context) ([]*flowcontrolv1.FlowSchema, apf.Levels, error) {
	schemas, err := h.d.Cluster.FlowSchemas()
	if err != nil {
		return nil, nil, err
	}
	plKind, known := h.d.Cluster.Kind(kube.PriorityLevels)
	if !known || !h.d.MayList(c, plKind) {
		return schemas, nil, nil
	}
	pls, err := h.d.Cluster.PriorityLevels()
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
	q := page.ParseListQuery(c.QueryParams())
	// The overview has no lint filter (present.LintFilterError says so): a
	// lint= link must not show every FlowSchema as if it had filtered them.
	q.LintErr = present.LintFilterError(string(kind.ID), q.Lint)
	status := http.StatusOK
	var p model.FlowSchemaListPage
	if !ok {
		p.List, status = model.ListPage{Forbidden: true}, http.StatusForbidden
	} else {
		schemas, levels, err := h.apfConfig(c)
		switch {
		case apierrors.IsForbidden(err):
			p.List, status = model.ListPage{Forbidden: true}, http.StatusForbidden
			chrome.Banners = append(chrome.Banners, page.ForbiddenBanner(kind, err))
		case errors.Is(err, kube.ErrNotSynced):
			p.List, status = model.ListPage{Empty: "Loading " + kind.Title + "…"}, http.StatusServiceUnavailable
			c.Response().Header().Set("Retry-After", "2")
		case err != nil:
			return err
		case q.LintErr != nil: // no rows: the page says why (LintStatus)
		default:
			p = present.FlowSchemaOverview(schemas, levels, q, time.Now())
			if st, shown := h.Load(c); shown { // load.go
				p.Notes = append(p.Notes, st.LoadBanner())
				if st.Allowed {
					present.AddFlowSchemaLoad(&p, st.Load)
					p.List.LoadFollow = st.Follow
				}
			}
		}
	}
	p.List.Chrome, p.List.KindID, p.List.Title, p.List.Action = chrome, string(kind.ID), kind.Title, urls.List(kind.ID)
	status = page.SelectorStatus(&p.List, q, status) // handlers/page/list_selector.go
	status = page.LintStatus(&p.List, q, status)     // handlers/page/list_lint.go
	p.ClassifyHref = urls.Classify
	p.List.NewHref = page.Creating{Log: h.d.Log, Cluster: h.d.Cluster, Access: h.d.Access, ReadOnly: h.d.ReadOnly}.NewHref(c, kind.ID)
	p.List.CleanupHref = h.d.Cleanup.Href(c, kind.ID)
	h.addTicks(c, &p) // ticks.go
	if p.List.NewHref != "" {
		p.NewFormHref = urls.FlowSchemaFormNew // form.go
	}
	return page.RenderPage(c, status, pages.FlowSchemaList(p), pages.FlowSchemaTable(p))
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
	p := model.ClassifyPage{
		Chrome: chrome, Form: present.NewClassifyForm(), Examples: present.ClassifyExamples(),
		Action: urls.Classify, ListHref: urls.FlowSchemas,
	}
	if f := parseClassifyForm(c.QueryParams()); f.Submitted {
		p.Form = f
	}
	if !ok {
		return page.Render(c, http.StatusForbidden, pages.Classify(p))
	}
	if !p.Form.Submitted {
		return page.Render(c, http.StatusOK, pages.Classify(p))
	}
	req, errs := present.ClassifyRequest(p.Form)
	if len(errs) > 0 {
		p.Errors = errs
		return page.Render(c, http.StatusUnprocessableEntity, pages.Classify(p))
	}
	schemas, levels, err := h.apfConfig(c)
	if errors.Is(err, kube.ErrNotSynced) {
		c.Response().Header().Set("Retry-After", "2")
		p.Notes = append(p.Notes, model.Banner{Tone: model.TonePending, Title: "Loading", Message: "clusterdesk is still reading the FlowSchemas; try again in a moment."})
		return page.Render(c, http.StatusServiceUnavailable, pages.Classify(p))
	}
	if err != nil {
		return err
	}
	if levels == nil {
		p.Notes = append(p.Notes, model.Banner{Tone: model.ToneWarning, Title: "Priority levels unknown",
			Message: "clusterdesk cannot read the PriorityLevelConfigurations as you, so the FlowSchemas' Dangling conditions decide which are skipped, and the priority level's queuing is unknown."})
	}
	res := apf.Classify(schemas, levels, req)
	total := len(apf.Sequence(schemas, levels))
	view := present.ClassifyResultView(res, req, total)
	if st, shown := h.Load(c); shown { // load.go
		if st.Load != nil {
			view.Load, view.LoadBadges = present.ClassifyLoad(view.PriorityLevel, st.Load)
		} else {
			view.Load, view.LoadFollow = st.LoadBanner().Message, st.Follow
		}
	}
	p.Result = &view
	return page.Render(c, http.StatusOK, pages.Classify(p))
}
