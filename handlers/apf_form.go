package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// flowSchemaFormKind is the FlowSchema kind once discovery has chosen its version.
func (h *Handlers) flowSchemaFormKind() (kube.Kind, error) {
	k, known := h.deps.Cluster.Kind(kube.FlowSchemas)
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
	plKind, known := h.deps.Cluster.Kind(kube.PriorityLevels)
	if !known || !h.mayList(c, plKind) {
		return nil
	}
	pls, err := h.deps.Cluster.PriorityLevels()
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
		p.Chrome = h.chrome(c, "New FlowSchema", k.ID, list, model.Crumb{Label: "New (form)"})
	} else {
		base := urls.Object(k.ID, f.Name)
		p.Action, p.YAMLURL, p.Cancel = urls.FlowSchemaForm(f.Name), urls.Edit(k.ID, f.Name), base
		p.Chrome = h.chrome(c, "Edit "+f.Name, k.ID, list, model.Crumb{Label: f.Name, Href: base}, model.Crumb{Label: "Edit (form)"})
	}
	p.Hints = present.FlowSchemaFormHints(f, levels)
	return p
}

func (h *Handlers) renderFlowSchemaForm(c echo.Context, status int, p model.FlowSchemaFormPage) error {
	return renderPage(c, status, pages.FlowSchemaForm(p), pages.FlowSchemaFormBody(p))
}

// newFlowSchemaForm shows the empty create form (GET /flowschemas/-/new).
func (h *Handlers) newFlowSchemaForm(c echo.Context) error {
	k, err := h.flowSchemaFormKind()
	if err != nil {
		return err
	}
	return h.renderFlowSchemaForm(c, http.StatusOK, h.flowSchemaFormPage(c, k, present.NewFlowSchemaForm(), true))
}

// editFlowSchemaForm shows the form filled from the live object, read from
// the API server as the user (GET /flowschemas/:name/form).
func (h *Handlers) editFlowSchemaForm(c echo.Context) error {
	k, err := h.flowSchemaFormKind()
	if err != nil {
		return err
	}
	live, err := h.deps.Editor.Get(c.Request().Context(), k, c.Param("name"))
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
	return present.FlowSchemaFormOf(fs, levels), text, nil
}

// createFlowSchemaForm answers the create form's buttons (POST /flowschemas/-/new).
func (h *Handlers) createFlowSchemaForm(c echo.Context) error { return h.postFlowSchemaForm(c, true) }

// updateFlowSchemaForm answers the edit form's buttons (POST /flowschemas/:name/form).
func (h *Handlers) updateFlowSchemaForm(c echo.Context) error { return h.postFlowSchemaForm(c, false) }

// postFlowSchemaForm is every button of the form: add and remove rows (the
// form comes back with every value as entered; nothing is sent), Preview (a
// dry run: the API server's verdict and the diff), Save (a dry run, then the
// write), and after a conflict, start again from the current version.
func (h *Handlers) postFlowSchemaForm(c echo.Context, create bool) error {
	k, err := h.flowSchemaFormKind()
	if err != nil {
		return err
	}
	if err := c.Request().ParseForm(); err != nil {
		if errors.Is(err, echo.ErrStatusRequestEntityTooLarge) {
			return bodyTooLarge()
		}
		return echo.NewHTTPError(http.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	f, op := present.ParseFlowSchemaForm(c.Request().PostForm)
	if !create {
		// The URL names the object; the form cannot rename it.
		f.Name = c.Param("name")
	} else {
		f.ResourceVersion, f.Base = "", ""
	}
	if op.Edits() {
		f = present.ApplyFormOp(f, op)
		p := h.flowSchemaFormPage(c, k, f, create)
		p.Focus = present.AddedRowKey(f, op)
		return h.renderFlowSchemaForm(c, http.StatusOK, p)
	}
	p := h.flowSchemaFormPage(c, k, f, create)
	switch op.Kind {
	case present.OpRebase:
		return h.rebaseFlowSchemaForm(c, k, p)
	case present.OpPreview, present.OpSave:
	default:
		return h.renderFlowSchemaForm(c, http.StatusOK, p)
	}

	spec, local := present.FlowSchemaSpec(f)
	if local != nil {
		p.Errors = local
		p.Problems = append(p.Problems, model.EditError{Title: "Not sent", Local: true,
			Message: "Correct the fields marked below; nothing was sent to the API server."})
		return h.renderFlowSchemaForm(c, http.StatusUnprocessableEntity, p)
	}
	ctx := c.Request().Context()
	var live *unstructured.Unstructured
	if !create {
		if f.ResourceVersion == "" {
			p.Problems = append(p.Problems, model.EditError{Title: "No starting version", Local: true,
				Message: "The form does not say which version of the FlowSchema you started from, so saving could overwrite someone else's change. Open the form again."})
			return h.renderFlowSchemaForm(c, http.StatusUnprocessableEntity, p)
		}
		if live, err = h.deps.Editor.Get(ctx, k, f.Name); err != nil {
			return h.flowSchemaFormFailed(c, p, err)
		}
		p.Unmodeled = present.UnmodeledSpecFields(live)
	}
	obj, err := present.FlowSchemaObject(live, apiVersion(k), f.Name, spec)
	if err != nil {
		return err
	}
	if !create {
		obj.SetResourceVersion(f.ResourceVersion)
	}
	// Save runs the dry run first too: a refused object is shown, not half written.
	res, rec, err := h.writeFlowSchema(c, k, obj, live, f.ResourceVersion, true)
	if apierrors.IsConflict(err) && !create {
		// The API server writes a FlowSchema's status itself (its Dangling
		// condition, right after creation): a new version that reads the same
		// as the one the form started from is no one's change to protect.
		if rv, same := h.unchangedSince(c, k, f); same {
			obj.SetResourceVersion(rv)
			f.ResourceVersion, p.Form.ResourceVersion = rv, rv
			res, rec, err = h.writeFlowSchema(c, k, obj, live, rv, true)
		}
	}
	p.Warnings = warningBanners(res.Warnings)
	if err != nil {
		return h.flowSchemaFormFailed(c, p, err)
	}
	// Where the server would store other values than typed (a precedence of 0
	// becomes 1000), say so beside the field; Save stops there.
	changes := present.ServerChanges(spec, res.Object)
	for key, msgs := range changes {
		p.Errors[key] = append(p.Errors[key], msgs...)
	}
	if op.Kind == present.OpPreview || changes != nil {
		return h.previewFlowSchema(c, p, res.Object, op, changes != nil)
	}

	res, rec, err = h.writeFlowSchema(c, k, obj, live, f.ResourceVersion, false)
	p.Warnings = warningBanners(res.Warnings)
	if err != nil {
		return h.flowSchemaFormFailed(c, p, err)
	}
	warnings := res.Warnings
	if msg, ok := danglingMessage(res.Object, h.levelNames(c)); ok {
		warnings = append(warnings, msg)
	}
	name := rec.Name
	var msg string
	if create {
		h.awaitCache(c, k.ID, name, func(string) bool { return true })
		msg = fmt.Sprintf("FlowSchema %s was created (version %s).", name, rec.After)
	} else {
		h.awaitCache(c, k.ID, name, func(rv string) bool { return rv != f.ResourceVersion || rv == rec.After })
		msg = fmt.Sprintf("%s was updated: version %s → %s.", name, f.ResourceVersion, rec.After)
		if rec.After == f.ResourceVersion {
			msg = name + " was already like this: the API server stored nothing new."
		}
	}
	return h.flashAndRedirect(c, "Saved", msg, warnings, urls.Object(k.ID, name))
}

// writeFlowSchema creates (live is nil) or updates obj as the user and logs
// the write; live is the object the API server returned before it, the
// record's "before" (never the form's base).
func (h *Handlers) writeFlowSchema(c echo.Context, k kube.Kind, obj, live *unstructured.Unstructured, before string, dryRun bool) (kube.WriteResult, writeRecord, error) {
	create := live == nil
	ctx := c.Request().Context()
	var res kube.WriteResult
	var err error
	var rec writeRecord
	if create {
		res, err = h.deps.Editor.Create(ctx, k, obj, dryRun)
		rec = createRecord(k, obj, dryRun, res, err)
	} else {
		res, err = h.deps.Editor.Update(ctx, k, obj, dryRun)
		rec = updateRecord(obj.GetName(), k, before, dryRun, res, err)
		rec.From = live
	}
	h.audit(c, rec)
	return res, rec, err
}

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

// flowSchemaFormFailed shows a refused request: each field cause of the API
// server's answer beside its field, the rest (and the message) above the
// form; a conflict with what changed on the server.
func (h *Handlers) flowSchemaFormFailed(c echo.Context, p model.FlowSchemaFormPage, err error) error {
	if apierrors.IsConflict(err) && !p.Create {
		return h.flowSchemaFormConflict(c, p, err)
	}
	problem := edit.Problem(err, "")
	var placed []model.Cause
	var rest []model.Cause
	for _, cause := range problem.Causes {
		if key := present.FormFieldKey(cause.Field); key != "" {
			p.Errors[key] = append(p.Errors[key], cause.Message)
			placed = append(placed, cause)
		} else {
			rest = append(rest, cause)
		}
	}
	problem.Causes = rest
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Reason == metav1.StatusReasonAlreadyExists {
		p.Errors[present.FormName] = append(p.Errors[present.FormName], st.Status().Message)
	}
	switch {
	case len(placed) > 0 && len(rest) == 0 && strings.Contains(problem.Message, invalidMark):
		// "<kind> "<name>" is invalid: <every cause>": each cause is beside
		// its field already.
		head, _, _ := strings.Cut(problem.Message, invalidMark)
		problem.Message = fmt.Sprintf("%s%s: %s, each shown beside its field.", head, strings.TrimSuffix(invalidMark, ":"), plural(len(placed), "problem"))
	case len(placed) > 0:
		problem.Message += fmt.Sprintf(" (%d of its causes are shown beside their fields)", len(placed))
	}
	p.Problems = append(p.Problems, problem)
	return h.renderFlowSchemaForm(c, problemStatus(err), p)
}

// flowSchemaFormConflict answers a 409: the values stay in the form, and
// beside it what changed on the server since the user opened it, with the
// offer to start again from the current version keeping the values.
func (h *Handlers) flowSchemaFormConflict(c echo.Context, p model.FlowSchemaFormPage, cause error) error {
	k, _ := h.flowSchemaFormKind()
	current, err := h.deps.Editor.Get(c.Request().Context(), k, p.Form.Name)
	if err != nil {
		p.Problems = append(p.Problems, edit.Problem(cause, ""), edit.Problem(err, ""))
		return h.renderFlowSchemaForm(c, http.StatusConflict, p)
	}
	curText, err := edit.Text(current, false)
	if err != nil {
		return err
	}
	base, err := edit.DecodeBase(p.Form.Base)
	if err != nil {
		base = ""
	}
	var st apierrors.APIStatus
	errors.As(cause, &st)
	p.Conflict = &model.Conflict{
		Message:        st.Status().Message,
		CurrentVersion: current.GetResourceVersion(),
		Changes: edit.Diff("Changed on the server since you opened the form",
			"version "+p.Form.ResourceVersion+" (you started from)", "version "+current.GetResourceVersion()+" (now)", base, curText),
	}
	return h.renderFlowSchemaForm(c, http.StatusConflict, p)
}

// rebaseFlowSchemaForm keeps the user's values and makes the current version
// the one they start from. It writes nothing: Preview and Save again.
func (h *Handlers) rebaseFlowSchemaForm(c echo.Context, k kube.Kind, p model.FlowSchemaFormPage) error {
	if p.Create {
		return h.renderFlowSchemaForm(c, http.StatusOK, p)
	}
	current, err := h.deps.Editor.Get(c.Request().Context(), k, p.Form.Name)
	if err != nil {
		return h.flowSchemaFormFailed(c, p, err)
	}
	text, err := edit.Text(current, false)
	if err != nil {
		return err
	}
	p.Form.ResourceVersion, p.Form.Base = current.GetResourceVersion(), edit.EncodeBase(text)
	p.Unmodeled = present.UnmodeledSpecFields(current)
	p.Notices = append(p.Notices, model.Banner{Tone: model.ToneOK, Title: "Now starting from version " + current.GetResourceVersion(), TestID: "fsform-rebased",
		Message: "Your values are kept and will replace the current ones. Nothing was stored: Preview to check, then Save."})
	return h.renderFlowSchemaForm(c, http.StatusOK, p)
}

// classifyOrFlowSchema serves the classifier's old address
// (/flowschemas/classify): a FlowSchema may be named "classify", and then
// this is its page; otherwise old links are sent to the classifier.
func (h *Handlers) classifyOrFlowSchema(c echo.Context) error {
	const name = "classify"
	if _, err := h.deps.Cluster.FlowSchema(name); err == nil {
		c.SetParamNames("kind", "name")
		c.SetParamValues(string(kube.FlowSchemas), name)
		return h.detail(c)
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
func (h *Handlers) previewFlowSchema(c echo.Context, p model.FlowSchemaFormPage, answer *unstructured.Unstructured, op present.FormOp, changed bool) error {
	f := p.Form
	before := ""
	if f.Base != "" {
		var err error
		if before, err = edit.DecodeBase(f.Base); err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, err.Error())
		}
	}
	after, err := edit.Text(answer, false)
	if err != nil {
		return err
	}
	from := "nothing (a new FlowSchema)"
	if !p.Create {
		from = "the version you started (" + f.ResourceVersion + ")"
	}
	d := edit.Diff("What the API server would store (dry run)", from, "after "+saveLabel(p.Create), before, after)
	if len(d.Lines) == 0 && !d.TooLarge {
		d.Note = "No change: the API server would store the FlowSchema as it is."
	}
	p.Preview = &d
	p.Warnings = append(p.Warnings, h.danglingWarnings(c, answer)...)
	if changed {
		p.Problems = append(p.Problems, model.EditError{Title: "The API server would store other values",
			Message: "The dry run passed, but the API server would store other values than you typed in the fields marked below. Nothing was stored: correct them, then Preview again."})
		if op.Kind == present.OpSave {
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

// unchangedSince reports whether the FlowSchema on the server now reads, as
// the editors show it (without status, resourceVersion and managedFields),
// exactly as the version the form started from; and its current version.
func (h *Handlers) unchangedSince(c echo.Context, k kube.Kind, f model.FlowSchemaForm) (string, bool) {
	if f.Base == "" {
		return "", false
	}
	base, err := edit.DecodeBase(f.Base)
	if err != nil {
		return "", false
	}
	current, err := h.deps.Editor.Get(c.Request().Context(), k, f.Name)
	if err != nil {
		return "", false
	}
	text, err := edit.Text(current, false)
	if err != nil || text != base {
		return "", false
	}
	return current.GetResourceVersion(), true
}
