package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// editForm is what every editor form posts.
type editForm struct {
	yaml            string // normalized to \n line breaks
	resourceVersion string // the version the user started from
	base            string // EncodeBase of the text the user started from
	showStatus      bool
}

// readEditForm parses the form. A body over the limit is refused here too (a
// body without Content-Length is only cut while it is read).
func readEditForm(c echo.Context) (editForm, error) {
	if err := c.Request().ParseForm(); err != nil {
		if errors.Is(err, echo.ErrStatusRequestEntityTooLarge) {
			return editForm{}, bodyTooLarge()
		}
		return editForm{}, echo.NewHTTPError(http.StatusBadRequest, "The form could not be read: "+err.Error())
	}
	f := c.Request().PostForm
	return editForm{
		yaml:            edit.Normalize(f.Get("yaml")),
		resourceVersion: f.Get("resourceVersion"),
		base:            f.Get("base"),
		showStatus:      f.Get("status") == "1",
	}, nil
}

func apiVersion(k kube.Kind) string {
	if k.Group == "" {
		return k.Version
	}
	return k.Group + "/" + k.Version
}

func objectURL(k kube.Kind, name string) string {
	return "/" + string(k.ID) + "/" + url.PathEscape(name)
}

// editPage fills what every rendering of the editor of kind/name (name "" to
// create) has in common.
func (h *Handlers) editPage(c echo.Context, k kube.Kind, name string, showStatus bool) model.EditPage {
	p := model.EditPage{KindID: string(k.ID), KindTitle: k.Title, Kind: k.Singular, Name: name, ShowStatus: showStatus}
	p.Docs, p.DocsNote = h.fieldDocs(c, k)
	list := model.Crumb{Label: k.Title, Href: "/" + string(k.ID)}
	if name == "" {
		p.Create, p.ApplyLabel = true, "Create"
		p.ApplyURL, p.CancelURL = "/"+string(k.ID)+"/create", "/"+string(k.ID)
		p.Chrome = h.chrome(c, "New "+k.Singular, k.ID, list, model.Crumb{Label: "New"})
		return p
	}
	base := objectURL(k, name)
	p.ApplyLabel = "Apply"
	p.ApplyURL, p.PreviewURL, p.RebaseURL, p.CancelURL = base+"/apply", base+"/preview", base+"/rebase", base
	p.StatusURL = base + "/edit"
	if !showStatus {
		p.StatusURL += "?status=1"
	}
	p.Chrome = h.chrome(c, "Edit "+name, k.ID, list, model.Crumb{Label: name, Href: base}, model.Crumb{Label: "Edit"})
	return p
}

// fieldDocs returns the kind's documented fields, or why there are none. The
// panel is a help: failing to read the document never stops the editor.
func (h *Handlers) fieldDocs(c echo.Context, k kube.Kind) ([]model.SchemaNode, string) {
	if h.deps.Docs == nil {
		return nil, ""
	}
	fields, err := h.deps.Docs.Fields(c.Request().Context(), k, h.deps.Cluster.ServerVersion())
	if err != nil {
		h.deps.Log.Warn("field docs unavailable", "kind", k.ID, "err", err)
		return nil, "The API server's documentation of " + k.Title + " could not be read: " + err.Error()
	}
	return fields, ""
}

// editKind resolves :kind for the editor routes.
func (h *Handlers) editKind(c echo.Context) (kube.Kind, error) {
	k, _, err := h.kindFor(c)
	if err == nil && k.Version == "" {
		err = echo.NewHTTPError(http.StatusServiceUnavailable, "clusterdesk does not know yet which version of "+k.Title+" the API server serves; try again in a moment.")
	}
	return k, err
}

// editObject shows the editor with the live object read from the API server.
func (h *Handlers) editObject(c echo.Context) error {
	k, err := h.editKind(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	show := c.QueryParam("status") == "1"
	obj, err := h.deps.Editor.Get(c.Request().Context(), k, name)
	if err != nil {
		return err
	}
	text, err := edit.Text(obj, show)
	if err != nil {
		return err
	}
	p := h.editPage(c, k, name, show)
	p.YAML, p.ResourceVersion, p.Base = text, obj.GetResourceVersion(), edit.EncodeBase(text)
	return render(c, http.StatusOK, pages.Edit(p))
}

// previewEdit dry-runs the update the Apply button would send and shows the
// difference between the version the user started from and what the API
// server would store.
func (h *Handlers) previewEdit(c echo.Context) error { return h.update(c, true) }

// applyEdit sends the update for real; on success the browser goes to the
// object's page with the result, otherwise the editor shows why, with the
// user's text.
func (h *Handlers) applyEdit(c echo.Context) error { return h.update(c, false) }

func (h *Handlers) update(c echo.Context, dryRun bool) error {
	k, err := h.editKind(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	f, err := readEditForm(c)
	if err != nil {
		return err
	}
	p := h.editPage(c, k, name, f.showStatus)
	p.YAML, p.ResourceVersion, p.Base = f.yaml, f.resourceVersion, f.base

	obj, err := edit.Parse(f.yaml, edit.Target{APIVersion: apiVersion(k), Kind: k.Singular, Name: name})
	if err != nil {
		return h.editProblem(c, p, err)
	}
	if f.resourceVersion == "" {
		return h.editProblem(c, p, &edit.InputError{Title: "No starting version",
			Message: "The form does not say which version of the object you started from, so an update could overwrite someone else's change. Open the editor again."})
	}
	obj.SetResourceVersion(f.resourceVersion)
	ctx := c.Request().Context()
	// Apply runs the dry run too, and stops if it shows that the server would
	// silently keep its own value of a field the user changed.
	res, err := h.deps.Editor.Update(ctx, k, obj, true)
	h.audit(updateRecord(name, k, f.resourceVersion, true, res, err))
	p.Warnings = res.Warnings
	if err != nil {
		return h.updateFailed(c, p, k, f, err)
	}
	ignored := h.ignored(f, obj, res.Object)
	if dryRun || len(ignored) > 0 {
		diff, err := h.previewDiff(f, res.Object, "the version you started ("+f.resourceVersion+")")
		if err != nil {
			return err
		}
		p.Preview = &diff
		if len(ignored) > 0 {
			p.Problems = append(p.Problems, edit.IgnoredProblem(ignored, f.yaml))
			return render(c, http.StatusUnprocessableEntity, pages.Edit(p))
		}
		return render(c, http.StatusOK, pages.Edit(p))
	}

	res, err = h.deps.Editor.Update(ctx, k, obj, false)
	rec := updateRecord(name, k, f.resourceVersion, false, res, err)
	h.audit(rec)
	p.Warnings = res.Warnings
	if err != nil {
		return h.updateFailed(c, p, k, f, err)
	}
	msg := fmt.Sprintf("%s was updated: version %s → %s.", name, f.resourceVersion, rec.After)
	if rec.After == f.resourceVersion {
		msg = name + " was already like this: the API server stored nothing new."
	}
	h.awaitCache(c, k.ID, name, func(rv string) bool { return rv != f.resourceVersion || rv == rec.After })
	return h.flashAndRedirect(c, "Saved", msg, res.Warnings, objectURL(k, name))
}

func updateRecord(name string, k kube.Kind, before string, dryRun bool, res kube.WriteResult, err error) writeRecord {
	rec := writeRecord{Verb: "update", Kind: k.Singular, Name: name, Before: before, DryRun: dryRun, Err: err}
	if res.Object != nil {
		rec.After = res.Object.GetResourceVersion()
	}
	return rec
}

// updateFailed shows a refused update: a conflict with what changed on the
// server, anything else with the API server's message.
func (h *Handlers) updateFailed(c echo.Context, p model.EditPage, k kube.Kind, f editForm, err error) error {
	if apierrors.IsConflict(err) {
		return h.showConflict(c, p, k, f, err)
	}
	return h.editProblem(c, p, err)
}

// ignored lists the user's changes (from the base they started from) that the
// server's answer does not carry. Without a readable base there is nothing to
// compare with.
func (h *Handlers) ignored(f editForm, mine, result *unstructured.Unstructured) []edit.IgnoredChange {
	base := map[string]any{}
	if f.base != "" {
		text, err := edit.DecodeBase(f.base)
		if err != nil {
			return nil
		}
		if base, err = edit.Fields(text); err != nil {
			return nil
		}
	}
	return edit.Ignored(base, mine.Object, result.Object)
}

// previewDiff compares the text the user started from (the base, as the
// editor showed it) with what the server would store, rendered the same way.
func (h *Handlers) previewDiff(f editForm, result *unstructured.Unstructured, fromLabel string) (model.Diff, error) {
	after, err := edit.Text(result, f.showStatus)
	if err != nil {
		return model.Diff{}, err
	}
	before := ""
	if f.base != "" {
		if before, err = edit.DecodeBase(f.base); err != nil {
			return model.Diff{}, echo.NewHTTPError(http.StatusBadRequest, err.Error())
		}
	}
	d := edit.Diff("What the API server would store (dry run)", fromLabel, "after "+applyWord(f), before, after)
	if len(d.Lines) == 0 {
		d.Note = "No change: the API server would store the object as it is."
	}
	return d, nil
}

func applyWord(f editForm) string {
	if f.resourceVersion == "" {
		return "Create"
	}
	return "Apply"
}

// editProblem shows the editor again with the user's text and what went wrong,
// with the API server's status (or 422 for a local refusal).
func (h *Handlers) editProblem(c echo.Context, p model.EditPage, err error) error {
	p.Problems = append(p.Problems, edit.Problem(err, p.YAML))
	return render(c, problemStatus(err), pages.Edit(p))
}

func problemStatus(err error) int {
	var in *edit.InputError
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &in):
		return http.StatusUnprocessableEntity
	case errors.As(err, &status) && status.Status().Code >= 400:
		return int(status.Status().Code)
	}
	return http.StatusBadGateway
}

// showConflict answers a 409: the user's text stays in the editor, and beside
// it the difference between the version they started from and the current one,
// with the offer to rebase onto the current version.
func (h *Handlers) showConflict(c echo.Context, p model.EditPage, k kube.Kind, f editForm, cause error) error {
	current, err := h.deps.Editor.Get(c.Request().Context(), k, p.Name)
	if err != nil {
		// Deleted meanwhile, or no longer readable: say so, keep the text.
		p.Problems = append(p.Problems, edit.Problem(cause, p.YAML), edit.Problem(err, p.YAML))
		return render(c, http.StatusConflict, pages.Edit(p))
	}
	curText, err := edit.Text(current, f.showStatus)
	if err != nil {
		return err
	}
	base, err := edit.DecodeBase(f.base)
	if err != nil {
		base = ""
	}
	var st apierrors.APIStatus
	errors.As(cause, &st)
	p.Conflict = &model.Conflict{
		Message:        st.Status().Message,
		CurrentVersion: current.GetResourceVersion(),
		Changes: edit.Diff("Changed on the server since you opened the editor",
			"version "+f.resourceVersion+" (you started from)", "version "+current.GetResourceVersion()+" (now)", base, curText),
	}
	return render(c, http.StatusConflict, pages.Edit(p))
}

// rebaseEdit carries the user's text onto the current version after a
// conflict: mode "merge" replays their changes onto it (a three-way merge by
// lines), mode "mine" keeps their text as it is. It writes nothing: the user
// previews and applies again, now against the current version.
func (h *Handlers) rebaseEdit(c echo.Context) error {
	k, err := h.editKind(c)
	if err != nil {
		return err
	}
	name := c.Param("name")
	f, err := readEditForm(c)
	if err != nil {
		return err
	}
	p := h.editPage(c, k, name, f.showStatus)
	p.YAML, p.ResourceVersion, p.Base = f.yaml, f.resourceVersion, f.base
	current, err := h.deps.Editor.Get(c.Request().Context(), k, name)
	if err != nil {
		return h.editProblem(c, p, err)
	}
	curText, err := edit.Text(current, f.showStatus)
	if err != nil {
		return err
	}
	rv := current.GetResourceVersion()
	text := f.yaml
	if c.FormValue("mode") != "mine" {
		base, err := edit.DecodeBase(f.base)
		if err != nil {
			return h.editProblem(c, p, &edit.InputError{Title: "Cannot rebase", Message: err.Error()})
		}
		text, err = edit.Rebase(base, f.yaml, curText)
		if errors.Is(err, edit.ErrOverlap) {
			p.Problems = append(p.Problems, model.EditError{Title: "Cannot rebase automatically", Local: true,
				Message: "Your changes and the changes on the server touch the same lines. Your text is unchanged; edit it against the current version shown beside it, then use “Keep my text, start from current”."})
			p.Conflict = &model.Conflict{CurrentVersion: rv,
				Changes: edit.Diff("Changed on the server since you opened the editor", "version "+f.resourceVersion+" (you started from)", "version "+rv+" (now)", base, curText)}
			return render(c, http.StatusConflict, pages.Edit(p))
		}
		if err != nil {
			return err
		}
	}
	p.YAML, p.ResourceVersion, p.Base = text, rv, edit.EncodeBase(curText)
	p.Notices = append(p.Notices, model.Banner{Tone: model.ToneOK, Title: "Rebased onto version " + rv, TestID: "editor-rebased",
		Message: "The editor now starts from the current version. Nothing was stored: Preview to check, then Apply."})
	return render(c, http.StatusOK, pages.Edit(p))
}

// newObject shows the create page with an example of the kind.
func (h *Handlers) newObject(c echo.Context) error {
	k, err := h.editKind(c)
	if err != nil {
		return err
	}
	text, ok, err := edit.Example(k.Singular, apiVersion(k))
	if err != nil {
		return err
	}
	if !ok {
		text = "apiVersion: " + apiVersion(k) + "\nkind: " + k.Singular + "\nmetadata:\n  name: \n"
	}
	p := h.editPage(c, k, "", false)
	p.YAML = text
	return render(c, http.StatusOK, pages.Edit(p))
}

// createObject previews (op=preview) or performs the creation.
func (h *Handlers) createObject(c echo.Context) error {
	k, err := h.editKind(c)
	if err != nil {
		return err
	}
	f, err := readEditForm(c)
	if err != nil {
		return err
	}
	dryRun := c.Request().PostForm.Get("op") == "preview"
	f.resourceVersion, f.base = "", ""
	p := h.editPage(c, k, "", false)
	p.YAML = f.yaml
	obj, err := edit.Parse(f.yaml, edit.Target{APIVersion: apiVersion(k), Kind: k.Singular})
	if err != nil {
		return h.editProblem(c, p, err)
	}
	ctx := c.Request().Context()
	res, err := h.deps.Editor.Create(ctx, k, obj, true)
	h.audit(createRecord(k, obj, true, res, err))
	p.Warnings = res.Warnings
	if err != nil {
		return h.editProblem(c, p, err)
	}
	ignored := h.ignored(f, obj, res.Object)
	if dryRun || len(ignored) > 0 {
		diff, err := h.previewDiff(f, res.Object, "nothing (a new object)")
		if err != nil {
			return err
		}
		p.Preview = &diff
		if len(ignored) > 0 {
			p.Problems = append(p.Problems, edit.IgnoredProblem(ignored, f.yaml))
			return render(c, http.StatusUnprocessableEntity, pages.Edit(p))
		}
		return render(c, http.StatusOK, pages.Edit(p))
	}
	res, err = h.deps.Editor.Create(ctx, k, obj, false)
	rec := createRecord(k, obj, false, res, err)
	h.audit(rec)
	p.Warnings = res.Warnings
	if err != nil {
		return h.editProblem(c, p, err)
	}
	h.awaitCache(c, k.ID, rec.Name, func(string) bool { return true })
	return h.flashAndRedirect(c, "Created", fmt.Sprintf("%s %s was created (version %s).", k.Singular, rec.Name, rec.After),
		res.Warnings, objectURL(k, rec.Name))
}

func createRecord(k kube.Kind, obj *unstructured.Unstructured, dryRun bool, res kube.WriteResult, err error) writeRecord {
	rec := writeRecord{Verb: "create", Kind: k.Singular, Name: obj.GetName(), DryRun: dryRun, Err: err}
	if res.Object != nil {
		rec.Name, rec.After = res.Object.GetName(), res.Object.GetResourceVersion()
	}
	return rec
}

// flashAndRedirect shows a write's result and warnings on the page it goes to.
func (h *Handlers) flashAndRedirect(c echo.Context, title, msg string, warnings []string, to string) error {
	banners := []model.Banner{{Tone: model.ToneOK, Title: title, Message: msg, TestID: "toast-result"}}
	for _, w := range warnings {
		banners = append(banners, model.Banner{Tone: model.ToneWarning, Title: "Warning from the API server", Message: w, TestID: "toast-warning"})
	}
	if err := setFlash(c, h.deps.Sessions, banners); err != nil {
		return errors.Join(errors.New("the change was written, but its confirmation could not be shown"), err)
	}
	return redirectSeeOther(c, to)
}
