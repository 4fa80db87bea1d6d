package editor

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/editing"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// update previews or writes an existing object, in the write mode the form
// chose: an update guarded by the resourceVersion the user started from, or a
// server-side apply (field manager clusterdesk; with force, confirmed by the
// user, it takes over fields other managers own).
func (h *Handlers) update(c echo.Context, t editTarget, dryRun bool) error {
	f, err := h.readEditForm(c)
	if err != nil {
		return err
	}
	p := h.targetPage(c, t, f.showStatus)
	p.YAML, p.ResourceVersion, p.Base, p.Mode = f.yaml, f.resourceVersion, f.base, f.write
	out, err := h.editorCase(c).Update(c.Request().Context(), editing.Change{Kind: t.kind, Name: t.name, Text: f.yaml,
		ResourceVersion: f.resourceVersion, BaseText: f.baseText, DryRun: dryRun,
		Apply: f.write == model.WriteApply, Force: f.force, ForceConfirmed: f.forceConfirmed, Cached: t.cached})
	p.Warnings = out.Warnings
	switch {
	case err != nil:
		return h.changeFailed(c, p, f, out, err)
	case !out.Written:
		return h.showPreview(c, p, f, out, "the version you started ("+f.resourceVersion+")")
	}
	return h.flashAndRedirect(c, "Saved", updatedMessage(t.name, f, out.After), out.Warnings, t.page)
}

func updatedMessage(name string, f editForm, after string) string {
	if after == f.resourceVersion {
		return name + " was already like this: the API server stored nothing new."
	}
	how := "updated"
	if f.write == model.WriteApply {
		how = "applied (server-side apply)"
		if f.force {
			how = "applied with force (server-side apply)"
		}
	}
	return fmt.Sprintf("%s was %s: version %s → %s.", name, how, f.resourceVersion, after)
}

// create previews (op=preview) or performs the creation.
func (h *Handlers) create(c echo.Context, t editTarget) error {
	f, err := h.readEditForm(c)
	if err != nil {
		return err
	}
	f.resourceVersion, f.base, f.baseText, f.write = "", "", "", model.WriteUpdate
	p := h.targetPage(c, t, false)
	p.YAML = f.yaml
	out, err := h.editorCase(c).Create(c.Request().Context(), editing.Change{Kind: t.kind, Text: f.yaml,
		DryRun: c.Request().PostForm.Get("op") == "preview", Namespaced: t.namespaced, Cached: t.cached})
	p.Warnings = out.Warnings
	switch {
	case err != nil:
		return h.changeFailed(c, p, f, out, err)
	case !out.Written:
		return h.showPreview(c, p, f, out, "nothing (a new object)")
	}
	return h.flashAndRedirect(c, "Created", fmt.Sprintf("%s %s was created (version %s).", t.kind.Singular, out.Name, out.After),
		out.Warnings, t.pageOf(out.Namespace, out.Name))
}

// showPreview shows a change that stopped after its dry run: the diff, and
// when the server would silently keep its own value of a field the user
// changed, those fields (nothing was written).
func (h *Handlers) showPreview(c echo.Context, p model.EditPage, f editForm, out editing.Outcome, fromLabel string) error {
	diff, err := h.previewDiff(f, out.Answer, fromLabel)
	if err != nil {
		return err
	}
	p.Preview = &diff
	if len(out.Ignored) > 0 {
		p.Problems = append(p.Problems, present.EditError(edit.IgnoredProblem(out.Ignored, f.yaml)))
		return page.Render(c, http.StatusUnprocessableEntity, pages.Edit(p))
	}
	return page.Render(c, http.StatusOK, pages.Edit(p))
}

// changeFailed shows a refused change: a stale update with what changed on
// the server, a server-side apply conflict with the managers and their fields
// (and the offer to force), anything else with the API server's message.
func (h *Handlers) changeFailed(c echo.Context, p model.EditPage, f editForm, out editing.Outcome, err error) error {
	if out.Conflict != nil {
		return h.showConflict(c, p, f, out.Conflict, err)
	}
	if f.write == model.WriteApply {
		if conflicts, ok := edit.ApplyConflicts(err, f.yaml); ok {
			p.ApplyConflicts = present.ManagerConflicts(conflicts)
			return page.Render(c, http.StatusConflict, pages.Edit(p))
		}
	}
	return h.editProblem(c, p, err)
}

// showConflict answers a 409: the user's text stays in the editor, and beside
// it the difference between the version they started from and the current one,
// with the offer to rebase onto the current version.
func (h *Handlers) showConflict(c echo.Context, p model.EditPage, f editForm, conflict *editing.Conflict, cause error) error {
	if conflict.Err != nil {
		// Deleted meanwhile, or no longer readable: say so, keep the text.
		p.Problems = append(p.Problems, page.ProblemOf(cause, p.YAML), page.ProblemOf(conflict.Err, p.YAML))
		return page.Render(c, http.StatusConflict, pages.Edit(p))
	}
	current := conflict.Current
	curText, err := edit.Text(current, f.showStatus)
	if err != nil {
		return err
	}
	p.Conflict = &model.Conflict{
		Message:        page.StatusMessage(cause),
		CurrentVersion: current.GetResourceVersion(),
		Changes: page.DiffOf("Changed on the server since you opened the editor",
			"version "+f.resourceVersion+" (you started from)", "version "+current.GetResourceVersion()+" (now)", f.baseText, curText),
	}
	return page.Render(c, http.StatusConflict, pages.Edit(p))
}

// rebase carries the user's text onto the current version after a conflict:
// mode "merge" replays their changes onto it, mode "mine" keeps their text as
// it is. It writes nothing.
func (h *Handlers) rebase(c echo.Context, t editTarget) error {
	f, err := h.readEditForm(c)
	if err != nil {
		return err
	}
	p := h.targetPage(c, t, f.showStatus)
	p.YAML, p.ResourceVersion, p.Base, p.Mode = f.yaml, f.resourceVersion, f.base, f.write
	r, err := h.editorCase(c).Rebase(c.Request().Context(), editing.Rebase{Kind: t.kind, Name: t.name, Text: f.yaml,
		BaseText: f.baseText, ShowStatus: f.showStatus, KeepMine: c.FormValue("mode") == "mine"})
	switch {
	case errors.Is(err, edit.ErrOverlap):
		p.Problems = append(p.Problems, model.EditError{Title: "Cannot rebase automatically", Local: true,
			Message: "Your changes and the changes on the server touch the same lines. Your text is unchanged; edit it against the current version shown beside it, then use “Keep my text, start from current”."})
		p.Conflict = &model.Conflict{CurrentVersion: r.Version,
			Changes: page.DiffOf("Changed on the server since you opened the editor", "version "+f.resourceVersion+" (you started from)", "version "+r.Version+" (now)", f.baseText, r.CurrentText)}
		return page.Render(c, http.StatusConflict, pages.Edit(p))
	case err != nil:
		return h.editProblem(c, p, err)
	}
	p.YAML, p.ResourceVersion, p.Base = r.Text, r.Version, edit.EncodeBase(r.CurrentText)
	p.Notices = append(p.Notices, model.Banner{Tone: model.ToneOK, Title: "Rebased onto version " + r.Version, TestID: "editor-rebased",
		Message: "The editor now starts from the current version. Nothing was stored: Preview to check, then Apply."})
	return page.Render(c, http.StatusOK, pages.Edit(p))
}
