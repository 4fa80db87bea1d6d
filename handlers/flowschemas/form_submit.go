package flowschemas

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/editing"
	"github.com/clusterdesk/clusterdesk/internal/flowschemaform"
	"github.com/clusterdesk/clusterdesk/internal/flowschemaform/form"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// postFlowSchemaForm is every button of the form: add and remove rows (the
// form comes back with every value as entered; nothing is sent), Preview (a
// dry run: the API server's verdict and the diff), Save (a dry run, then the
// write), and after a conflict, start again from the current version.
func (h *Handlers) postFlowSchemaForm(c echo.Context, create bool) error {
	k, err := h.flowSchemaFormKind()
	if err != nil {
		return err
	}
	f, op, err := readFlowSchemaForm(c, create)
	if err != nil {
		return err
	}
	if op.Edits() {
		f = form.ApplyOp(f, op)
		p := h.flowSchemaFormPage(c, k, f, create)
		p.Focus = form.AddedRowKey(f, op)
		return h.renderFlowSchemaForm(c, http.StatusOK, p)
	}
	p := h.flowSchemaFormPage(c, k, f, create)
	switch op.Kind {
	case form.OpRebase:
		return h.rebaseFlowSchemaForm(c, k, p)
	case form.OpPreview, form.OpSave:
		return h.submitFlowSchemaForm(c, k, p, op)
	}
	return h.renderFlowSchemaForm(c, http.StatusOK, p)
}

// readFlowSchemaForm parses the posted form and the button pressed.
func readFlowSchemaForm(c echo.Context, create bool) (model.FlowSchemaForm, form.Op, error) {
	if err := c.Request().ParseForm(); err != nil {
		if errors.Is(err, echo.ErrStatusRequestEntityTooLarge) {
			return model.FlowSchemaForm{}, form.Op{}, page.BodyTooLarge()
		}
		return model.FlowSchemaForm{}, form.Op{}, echo.NewHTTPError(http.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	f, op := form.Parse(c.Request().PostForm)
	if !create {
		// The URL names the object; the form cannot rename it.
		f.Name = c.Param("name")
	} else {
		f.ResourceVersion, f.Base = "", ""
	}
	return f, op, nil
}

// submitFlowSchemaForm answers Preview and Save: the fields are checked
// here, the use case sends them (flowschemaform.Service.Submit).
func (h *Handlers) submitFlowSchemaForm(c echo.Context, k kube.Kind, p model.FlowSchemaFormPage, op form.Op) error {
	f := p.Form
	spec, local := flowschemaform.Spec(f)
	if local != nil {
		p.Errors = local
		p.Problems = append(p.Problems, model.EditError{Title: "Not sent", Local: true,
			Message: "Correct the fields marked below; nothing was sent to the API server."})
		return h.renderFlowSchemaForm(c, http.StatusUnprocessableEntity, p)
	}
	if !p.Create && f.ResourceVersion == "" {
		p.Problems = append(p.Problems, model.EditError{Title: "No starting version", Local: true,
			Message: "The form does not say which version of the FlowSchema you started from, so saving could overwrite someone else's change. Open the form again."})
		return h.renderFlowSchemaForm(c, http.StatusUnprocessableEntity, p)
	}
	// The starting text is decoded once per POST: the use case (a conflict's
	// diff), the preview's diff and the conflict page read the same text.
	base, baseErr := formBase(f.Base)
	out, err := h.formCase(c).Submit(c.Request().Context(), flowschemaform.Submission{Kind: k, Name: f.Name, Create: p.Create,
		Spec: spec, ResourceVersion: f.ResourceVersion, BaseText: base, Save: op.Kind == form.OpSave})
	if out.Live != nil {
		p.Unmodeled = present.UnmodeledSpecFields(out.Live)
	}
	p.Form.ResourceVersion = out.ResourceVersion
	p.Warnings = warningBanners(out.Warnings)
	switch {
	case err != nil:
		return h.flowSchemaFormFailed(c, p, base, out.Conflict, err)
	case !out.Written:
		// Where the server would store other values than typed (a precedence
		// of 0 becomes 1000), say so beside the field; Save stopped there.
		for key, msgs := range out.Changes {
			p.Errors[key] = append(p.Errors[key], msgs...)
		}
		return h.previewFlowSchema(c, p, base, baseErr, out.Answer, op, out.Changes != nil)
	}
	warnings := out.Warnings
	if msg, ok := danglingMessage(out.Stored, h.levelNames(c)); ok {
		warnings = append(warnings, msg)
	}
	return h.d.Flash.AndRedirect(c, "Saved", flowSchemaSaved(p.Create, out), warnings, urls.Object(k.ID, out.Name))
}

func flowSchemaSaved(create bool, out flowschemaform.Outcome) string {
	switch {
	case create:
		return fmt.Sprintf("FlowSchema %s was created (version %s).", out.Name, out.After)
	case out.After == out.ResourceVersion:
		return out.Name + " was already like this: the API server stored nothing new."
	}
	return fmt.Sprintf("%s was updated: version %s → %s.", out.Name, out.ResourceVersion, out.After)
}

// formBase is the form's starting text; "" when there is none, and "" with
// the error when it cannot be read (then no diff shows what changed since,
// and a preview refuses the form).
func formBase(field string) (string, error) {
	if field == "" {
		return "", nil
	}
	text, err := edit.DecodeBase(field)
	if err != nil {
		return "", err
	}
	return text, nil
}

// flowSchemaFormFailed shows a refused request: each field cause of the API
// server's answer beside its field, the rest (and the message) above the
// form; a conflict with what changed on the server.
func (h *Handlers) flowSchemaFormFailed(c echo.Context, p model.FlowSchemaFormPage, base string, conflict *editing.Conflict, err error) error {
	if conflict != nil {
		return h.flowSchemaFormConflict(c, p, base, conflict, err)
	}
	problem := page.ProblemOf(err, "")
	var placed []model.Cause
	var rest []model.Cause
	for _, cause := range problem.Causes {
		if key := form.FieldKey(cause.Field); key != "" {
			p.Errors[key] = append(p.Errors[key], cause.Message)
			placed = append(placed, cause)
		} else {
			rest = append(rest, cause)
		}
	}
	problem.Causes = rest
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Reason == metav1.StatusReasonAlreadyExists {
		p.Errors[form.FieldName] = append(p.Errors[form.FieldName], st.Status().Message)
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
	return h.renderFlowSchemaForm(c, page.ProblemStatus(err), p)
}

// flowSchemaFormConflict answers a 409: the values stay in the form, and
// beside it what changed on the server since the user opened it, with the
// offer to start again from the current version keeping the values.
func (h *Handlers) flowSchemaFormConflict(c echo.Context, p model.FlowSchemaFormPage, base string, conflict *editing.Conflict, cause error) error {
	if conflict.Err != nil {
		p.Problems = append(p.Problems, page.ProblemOf(cause, ""), page.ProblemOf(conflict.Err, ""))
		return h.renderFlowSchemaForm(c, http.StatusConflict, p)
	}
	current := conflict.Current
	curText, err := edit.Text(current, false)
	if err != nil {
		return err
	}
	p.Conflict = &model.Conflict{
		Message:        page.StatusMessage(cause),
		CurrentVersion: current.GetResourceVersion(),
		Changes: page.DiffOf("Changed on the server since you opened the form",
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
	current, err := h.formCase(c).Read(c.Request().Context(), k, p.Form.Name)
	if err != nil {
		return h.flowSchemaFormFailed(c, p, "", nil, err)
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
