package insight

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/celmatch"
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
// version and resource it only shows the form. The form is POSTed (objects
// can be large); a GET with the same fields in the query answers too, so a
// link to a simple request keeps working.
func (h *Handlers) intercept(c echo.Context) error {
	kind, ok := h.d.Cluster.Kind(kube.Webhooks)
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, "clusterdesk does not show ValidatingWebhookConfigurations.")
	}
	q, err := h.interceptValues(c)
	if err != nil {
		return err
	}
	p := model.InterceptPage{
		Chrome: h.d.Chrome(c, "Which webhooks would intercept this request?", kind.ID,
			model.Crumb{Label: kind.Title, Href: urls.List(kind.ID)}, model.Crumb{Label: "Intercept"}),
		Operations: present.InterceptOperations,
		Form: model.InterceptForm{
			Operation: strings.ToUpper(strings.TrimSpace(q.Get("operation"))), Group: strings.TrimSpace(q.Get("group")),
			Version: strings.TrimSpace(q.Get("version")), Resource: strings.TrimSpace(q.Get("resource")),
			Subresource: strings.TrimSpace(q.Get("subresource")), Namespace: strings.TrimSpace(q.Get("namespace")),
			NamespaceLabels: q.Get("nsLabels"), ObjectLabels: q.Get("labels"), OldObjectLabels: q.Get("oldLabels"),
			Object: q.Get("object"), OldObject: q.Get("oldObject"), User: strings.TrimSpace(q.Get("user")), Groups: q.Get("groups"),
		},
		Errors: map[string]string{},
	}
	if p.Form.Operation == "" {
		p.Form.Operation = "CREATE"
	}
	if !q.Has("resource") {
		return page.Render(c, http.StatusOK, pages.Intercept(p))
	}
	req, ok := parseIntercept(p.Form, p.Errors)
	objs, objsOK := parseInterceptObjects(p.Form, p.Errors)
	if !ok || !objsOK {
		return page.Render(c, http.StatusUnprocessableEntity, pages.Intercept(p))
	}
	ask := intercept.Asker{Cache: h.d.Cluster, Lookup: h.d.Lookup, Timeout: h.d.LookupTimeout,
		MayList: func(k kube.Kind) bool { return h.d.MayList(c, k) }, Policies: h.d.Cluster}
	if h.d.Lookup != nil {
		ask.Reviewer = h.d.Lookup
		ask.Params = h.d.Lookup
	}
	var ans intercept.Answer
	ans, err = ask.AskWith(c.Request().Context(), req, objs)
	if err != nil {
		return err
	}
	p.Notes = append(p.Notes, ans.Notes...)
	p.Result = present.InterceptResult(ans.Verdicts, ans.Conditions)
	p.Policies = present.InterceptPolicies(ans.Policies)
	return page.Render(c, http.StatusOK, pages.Intercept(p))
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

// maxInterceptObject bounds each YAML object of the form. The whole POST
// body is bounded by page.MaxBody (a 413 with SimulatorTooLarge); a GET's
// query by the HTTP server's header limit.
const maxInterceptObject = 512 << 10

// interceptValues are the form's fields: the query of a GET, the body of a
// POST (multipart, as the page sends it, or URL-encoded).
func (h *Handlers) interceptValues(c echo.Context) (url.Values, error) {
	if c.Request().Method != http.MethodPost {
		return c.QueryParams(), nil
	}
	if err := page.ParseForm(c); err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) && he.Code == http.StatusRequestEntityTooLarge {
			return nil, SimulatorTooLarge()
		}
		return nil, err
	}
	return c.Request().PostForm, nil
}

// parseInterceptObjects reads what the matchConditions see: the objects
// (YAML, parsed with sigs.k8s.io/yaml) and the user, recording each bad
// field in errs.
func parseInterceptObjects(f model.InterceptForm, errs map[string]string) (intercept.Objects, bool) {
	objs := intercept.Objects{User: celmatch.User{Name: f.User}}
	for _, g := range strings.Split(f.Groups, ",") {
		if g = strings.TrimSpace(g); g != "" {
			objs.User.Groups = append(objs.User.Groups, g)
		}
	}
	for field, text := range map[string]string{"object": f.Object, "oldObject": f.OldObject} {
		if strings.TrimSpace(text) == "" {
			continue
		}
		if len(text) > maxInterceptObject {
			errs[field] = "At most " + strconv.Itoa(maxInterceptObject>>10) + " KiB of YAML."
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
			errs[field] = "Not a YAML object: " + err.Error()
			continue
		}
		if field == "object" {
			objs.Object = obj
		} else {
			objs.OldObject = obj
		}
	}
	return objs, len(errs) == 0
}

// SimulatorTooLarge is the answer to a simulator request over page.MaxBody:
// the editor's message speaks of applying objects, which the simulator does
// not. The body limit's middleware (handlers/edit_limit.go) answers it too.
func SimulatorTooLarge() error {
	return echo.NewHTTPError(http.StatusRequestEntityTooLarge,
		"The objects you sent are larger than "+page.MaxBody+" together, the most the simulator accepts in one request, so nothing was evaluated. "+
			"Go back to keep your text, and leave out what the matchConditions and validations do not read (managedFields, large data or status).")
}
