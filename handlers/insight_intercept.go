package handlers

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// intercept answers "which webhooks would intercept this request?" from the
// cached ValidatingWebhookConfigurations, with the namespace's labels and the
// resource's other versions read from the cluster. Without a version and
// resource it only shows the form.
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
	configs, err := h.deps.Cluster.Webhooks()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), lookupTimeout)
	defer cancel()
	equivalents := []admission.GVR{req.Resource}
	if l := h.deps.Lookup; l != nil {
		if req.Namespace != "" && req.Resource.Resource != "namespaces" {
			switch nsLabels, found, err := l.Namespace(ctx, req.Namespace); {
			case err != nil:
				p.Notes = append(p.Notes, "Could not read namespace "+req.Namespace+", so the labels typed above are used: "+err.Error())
			case found:
				req.NamespaceLabels = nsLabels
				p.Notes = append(p.Notes, "Namespace "+req.Namespace+" exists; its labels are used: "+orNone(labels.Set(nsLabels).String())+".")
			default:
				p.Notes = append(p.Notes, "Namespace "+req.Namespace+" does not exist; the labels typed above are used.")
			}
		}
		// Equivalent resources: the same storage served through other
		// versions or groups (admission.Equivalents says how it is found).
		lists, err := l.ResourceLists(ctx, req.Resource.Resource)
		switch {
		case err != nil:
			p.Notes = append(p.Notes, "Could not ask discovery for the resource's equivalents, so matchPolicy Equivalent is judged on this version only: "+err.Error())
		case !served(lists, req.Resource):
			p.Notes = append(p.Notes, "The API server does not serve "+req.Resource.Resource+" in "+orCore(req.Resource.Group)+"/"+req.Resource.Version+"; the rules are matched as typed.")
		default:
			equivalents = admission.Equivalents(lists, req.Resource, req.Subresource)
			names := make([]string, 0, len(equivalents))
			for _, e := range equivalents {
				names = append(names, e.String())
			}
			p.Notes = append(p.Notes, "Served as the same objects (equivalent for matchPolicy Equivalent): "+strings.Join(names, ", ")+".")
		}
	}
	all := make([]admission.Config, 0, len(configs))
	for _, cfg := range configs {
		all = append(all, admission.FromValidating(cfg))
	}
	mutating, note := h.mutatingConfigs(c)
	all = append(all, mutating...)
	if note != "" {
		p.Notes = append(p.Notes, note)
	}
	p.Result = present.InterceptResult(admission.Intercepts(all, req, equivalents))
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

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func orCore(g string) string {
	if g == "" {
		return "core"
	}
	return g
}
