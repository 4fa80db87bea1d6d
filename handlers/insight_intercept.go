package handlers

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/intercept"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// intercept answers "which webhooks would intercept this request?"
// (intercept.Asker: the cached webhook configurations, with the namespace's
// labels and the resource's other versions read from the cluster). Without a
// version and resource it only shows the form.
func (h *Handlers) intercept(c echo.Context) error {
	kind, ok := h.deps.Cluster.Kind(kube.Webhooks)
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, "clusterdesk does not show ValidatingWebhookConfigurations.")
	}
	q := c.QueryParams()
	p := model.InterceptPage{
		Chrome: h.chrome(c, "Which webhooks would intercept this request?", kind.ID,
			model.Crumb{Label: kind.Title, Href: urls.List(kind.ID)}, model.Crumb{Label: "Intercept"}),
		Operations: present.InterceptOperations,
		Form: model.InterceptForm{
			Operation: strings.ToUpper(strings.TrimSpace(q.Get("operation"))), Group: strings.TrimSpace(q.Get("group")),
			Version: strings.TrimSpace(q.Get("version")), Resource: strings.TrimSpace(q.Get("resource")),
			Subresource: strings.TrimSpace(q.Get("subresource")), Namespace: strings.TrimSpace(q.Get("namespace")),
			NamespaceLabels: q.Get("nsLabels"), ObjectLabels: q.Get("labels"), OldObjectLabels: q.Get("oldLabels"),
		},
		Errors: map[string]string{},
	}
	if p.Form.Operation == "" {
		p.Form.Operation = "CREATE"
	}
	if !q.Has("resource") {
		return render(c, http.StatusOK, pages.Intercept(p))
	}
	req, ok := parseIntercept(p.Form, p.Errors)
	if !ok {
		return render(c, http.StatusUnprocessableEntity, pages.Intercept(p))
	}
	ask := intercept.Asker{Cache: h.deps.Cluster, Lookup: h.deps.Lookup, Timeout: lookupTimeout,
		MayList: func(k kube.Kind) bool { return h.mayList(c, k) }}
	ans, err := ask.Ask(c.Request().Context(), req)
	if err != nil {
		return err
	}
	p.Notes = append(p.Notes, ans.Notes...)
	p.Result = present.InterceptResult(ans.Verdicts)
	return render(c, http.StatusOK, pages.Intercept(p))
}

// parseIntercept turns the form into a request, recording each bad field in errs.
func parseIntercept(f model.InterceptForm, errs map[string]string) (admission.Request, bool) {
	req := admission.Request{
		Operation:   admissionregistrationv1.OperationType(f.Operation),
		Resource:    admission.GVR{Group: f.Group, Version: f.Version, Resource: strings.ToLower(f.Resource)},
		Subresource: f.Subresource, Namespace: f.Namespace,
	}
	if !slices.Contains(present.InterceptOperations, f.Operation) {
		errs["operation"] = "Choose one of " + strings.Join(present.InterceptOperations, ", ") + "."
	}
	if f.Version == "" {
		errs["version"] = "A version is needed, e.g. v1."
	}
	if req.Resource.Resource == "" {
		errs["resource"] = "A resource is needed, e.g. configmaps."
	}
	for field, text := range map[string]string{"nsLabels": f.NamespaceLabels, "labels": f.ObjectLabels, "oldLabels": f.OldObjectLabels} {
		set, err := labels.ConvertSelectorToLabelsMap(strings.TrimSpace(text))
		if err != nil {
			errs[field] = "Labels are written key=value, separated by commas: " + err.Error()
			continue
		}
		switch field {
		case "nsLabels":
			req.NamespaceLabels = set
		case "labels":
			req.ObjectLabels = set
		default:
			req.OldObjectLabels = set
		}
	}
	return req, len(errs) == 0
}
