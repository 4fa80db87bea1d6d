package flowschemas

import (
	"net/http"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/flowschemaform"
	"github.com/clusterdesk/clusterdesk/internal/flowschemaform/form"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// flowSchemaFormKind is the FlowSchema kind once discovery has chosen its version.
func (h *Handlers) flowSchemaFormKind() (kube.Kind, error) {
	k, known := h.d.Cluster.Kind(kube.FlowSchemas)
	if !known {
		return k, echo.NewHTTPError(http.StatusNotFound, "clusterdesk has no page for FlowSchemas.")
	}
	if k.Version == "" {
		return k, echo.NewHTTPError(http.StatusServiceUnavailable, "clusterdesk does not know yet which version of FlowSchemas the API server serves; try again in a moment.")
	}
	return k, nil
}

// levelNames are the priority levels the user may see, sorted; nil when they
// cannot be read (then no hint says a level is missing).
func (h *Handlers) levelNames(c echo.Context) []string {
	plKind, known := h.d.Cluster.Kind(kube.PriorityLevels)
	if !known || !h.d.MayList(c, plKind) {
		return nil
	}
	pls, err := h.d.Cluster.PriorityLevels()
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(pls))
	for _, pl := range pls {
		names = append(names, pl.Name)
	}
	slices.Sort(names)
	return names
}

// flowSchemaFormPage fills what every rendering of the form has in common.
func (h *Handlers) flowSchemaFormPage(c echo.Context, k kube.Kind, f model.FlowSchemaForm, create bool) model.FlowSchemaFormPage {
	levels := h.levelNames(c)
	p := model.FlowSchemaFormPage{Create: create, Form: f, PriorityLevels: levels, Errors: map[string][]string{}}
	list := model.Crumb{Label: k.Title, Href: urls.FlowSchemas}
	if create {
		p.Action, p.YAMLURL, p.Cancel = urls.FlowSchemaFormNew, urls.New(k.ID), urls.FlowSchemas
		p.Chrome = h.d.Chrome(c, "New FlowSchema", k.ID, list, model.Crumb{Label: "New (form)"})
	} else {
		base := urls.Object(k.ID, f.Name)
		p.Action, p.YAMLURL, p.Cancel = urls.FlowSchemaForm(f.Name), urls.Edit(k.ID, f.Name), base
		p.Chrome = h.d.Chrome(c, "Edit "+f.Name, k.ID, list, model.Crumb{Label: f.Name, Href: base}, model.Crumb{Label: "Edit (form)"})
	}
	p.Hints = flowschemaform.Hints(f, levels)
	return p
}

func (h *Handlers) renderFlowSchemaForm(c echo.Context, status int, p model.FlowSchemaFormPage) error {
	return page.RenderPage(c, status, pages.FlowSchemaForm(p), pages.FlowSchemaFormBody(p))
}

// newFlowSchemaForm shows the empty create form (GET /flowschemas/-/new).
func (h *Handlers) newFlowSchemaForm(c echo.Context) error {
	k, err := h.flowSchemaFormKind()
	if err != nil {
		return err
	}
	return h.renderFlowSchemaForm(c, http.StatusOK, h.flowSchemaFormPage(c, k, form.New(), true))
}

// editFlowSchemaForm shows the form filled from the live object, read from
// the API server as the user (GET /flowschemas/:name/form).
func (h *Handlers) editFlowSchemaForm(c echo.Context) error {
	k, err := h.flowSchemaFormKind()
	if err != nil {
		return err
	}
	live, err := h.formCase(c).Read(c.Request().Context(), k, c.Param("name"))
	if err != nil {
		return err
	}
	f, text, err := formOfLive(live, h.levelNames(c))
	if err != nil {
		return err
	}
	f.Base = edit.EncodeBase(text)
	p := h.flowSchemaFormPage(c, k, f, false)
	p.Unmodeled = present.UnmodeledSpecFields(live)
	if b, ok := present.MaintenanceWarning(live.GetName(), live.GetAnnotations(), live.GetGeneration()); ok {
		p.Notices = append(p.Notices, b)
	}
	return h.renderFlowSchemaForm(c, http.StatusOK, p)
}

// formOfLive fills the form from a live object, and gives the object's text
// as the YAML editor shows it (the base of the preview and conflict diffs).
func formOfLive(live *unstructured.Unstructured, levels []string) (model.FlowSchemaForm, string, error) {
	fs, err := present.FlowSchemaOf(live)
	if err != nil {
		return model.FlowSchemaForm{}, "", err
	}
	text, err := edit.Text(live, false)
	if err != nil {
		return model.FlowSchemaForm{}, "", err
	}
	return flowschemaform.FormOf(fs, levels), text, nil
}

// createFlowSchemaForm answers the create form's buttons (POST /flowschemas/-/new).
func (h *Handlers) createFlowSchemaForm(c echo.Context) error { return h.postFlowSchemaForm(c, true) }

// updateFlowSchemaForm answers the edit form's buttons (POST /flowschemas/:name/form).
func (h *Handlers) updateFlowSchemaForm(c echo.Context) error { return h.postFlowSchemaForm(c, false) }

func warningBanners(ws []string) []model.Banner {
	var out []model.Banner
	for _, w := range ws {
		out = append(out, model.Banner{Tone: model.ToneWarning, Title: "Warning from the API server", Message: w, TestID: "fsform-warning"})
	}
	return out
}

// danglingWarnings says when the object the API server accepted points at a
// priority level that does not exist: the API server accepts it, then marks
// it Dangling and skips it when classifying.
func (h *Handlers) danglingWarnings(c echo.Context, obj *unstructured.Unstructured) []model.Banner {
	msg, ok := danglingMessage(obj, h.levelNames(c))
	if !ok {
		return nil
	}
	return []model.Banner{{Tone: model.ToneWarning, Title: "Dangling", Message: msg, TestID: "fsform-dangling"}}
}

func danglingMessage(obj *unstructured.Unstructured, levels []string) (string, bool) {
	if obj == nil {
		return "", false
	}
	if msg, ok := present.DanglingCondition(obj); ok {
		return "The API server marks this FlowSchema Dangling: " + msg, true
	}
	fs, err := present.FlowSchemaOf(obj)
	if err != nil || levels == nil {
		return "", false
	}
	pl := fs.Spec.PriorityLevelConfiguration.Name
	if slices.Contains(levels, pl) {
		return "", false
	}
	return "The API server accepts it, but no PriorityLevelConfiguration named " + pl +
		" exists: once stored, the API server marks this FlowSchema Dangling (condition Dangling=True) and skips it; its requests go to a later FlowSchema.", true
}

// classifyOrFlowSchema serves the classifier's old address
// (/flowschemas/classify): a FlowSchema may be named "classify", and then
// this is its page; otherwise old links are sent to the classifier.
func (h *Handlers) classifyOrFlowSchema(c echo.Context) error {
	const name = "classify"
	if _, err := h.d.Cluster.FlowSchema(name); err == nil {
		c.SetParamNames("kind", "name")
		c.SetParamValues(string(kube.FlowSchemas), name)
		return h.d.Detail(c)
	}
	to := urls.Classify
	if q := c.QueryString(); q != "" {
		to += "?" + q
	}
	return c.Redirect(http.StatusFound, to)
}

// invalidMark ends the head of an Invalid status message (apierrors.NewInvalid).
const invalidMark = " is invalid:"

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// previewFlowSchema shows the dry run's answer: the diff from the version the
// user started from (nothing, creating) to what the API server would store,
// a Dangling warning, and either the verdict or, when the server would store
// other values than typed, why Save stopped.
// before is the starting text (formBase), beforeErr why it could not be read.
func (h *Handlers) previewFlowSchema(c echo.Context, p model.FlowSchemaFormPage, before string, beforeErr error, answer *unstructured.Unstructured, op form.Op, changed bool) error {
	f := p.Form
	if beforeErr != nil {
		return echo.NewHTTPError(http.StatusBadRequest, beforeErr.Error())
	}
	after, err := edit.Text(answer, false)
	if err != nil {
		return err
	}
	from := "nothing (a new FlowSchema)"
	if !p.Create {
		from = "the version you started (" + f.ResourceVersion + ")"
	}
	d := page.DiffOf("What the API server would store (dry run)", from, "after "+saveLabel(p.Create), before, after)
	if len(d.Lines) == 0 && !d.TooLarge {
		d.Note = "No change: the API server would store the FlowSchema as it is."
	}
	p.Preview = &d
	p.Warnings = append(p.Warnings, h.danglingWarnings(c, answer)...)
	if changed {
		p.Problems = append(p.Problems, model.EditError{Title: "The API server would store other values",
			Message: "The dry run passed, but the API server would store other values than you typed in the fields marked below. Nothing was stored: correct them, then Preview again."})
		if op.Kind == form.OpSave {
			return h.renderFlowSchemaForm(c, http.StatusUnprocessableEntity, p)
		}
		return h.renderFlowSchemaForm(c, http.StatusOK, p)
	}
	p.Notices = append(p.Notices, model.Banner{Tone: model.ToneOK, Title: "The API server accepts this FlowSchema", TestID: "fsform-verdict",
		Message: "A dry run with strict field validation passed. Nothing was stored: press " + saveLabel(p.Create) + " to store it."})
	return h.renderFlowSchemaForm(c, http.StatusOK, p)
}

func saveLabel(create bool) string {
	if create {
		return "Create"
	}
	return "Save"
}
