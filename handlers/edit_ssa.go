package handlers

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// serverSideApply previews or writes the editor's text with server-side apply
// (field manager clusterdesk), the alternative to the default update. The text
// carries no resourceVersion: a change made meanwhile by someone else is not a
// conflict by itself; a field the text sets differently from the value another
// manager owns is, and the page then names the managers and fields. With
// force (confirmed by the user) clusterdesk takes those fields over.
func (h *Handlers) serverSideApply(c echo.Context, t editTarget, p model.EditPage, f editForm, obj *unstructured.Unstructured, dryRun bool) error {
	if f.force && !f.forceConfirmed {
		return h.editProblem(c, p, &edit.InputError{Title: "Force not confirmed",
			Message: "Tick the box that confirms taking the fields over from their managers, or change your text so it leaves their fields alone."})
	}
	k, name := t.kind, t.name
	obj.SetResourceVersion("")
	ctx := c.Request().Context()
	before := h.serverBefore(c, k, name)
	res, err := h.deps.Editor.Apply(ctx, k, obj, true, f.force)
	h.audit(c, applyRecord(name, k, f, true, res, err).from(before))
	p.Warnings = res.Warnings
	if err != nil {
		return h.applyFailed(c, p, f, err)
	}
	if done, err := h.previewOrStop(c, p, f, obj, res, dryRun, "the version you started ("+f.resourceVersion+")"); done {
		return err
	}
	res, err = h.deps.Editor.Apply(ctx, k, obj, false, f.force)
	rec := applyRecord(name, k, f, false, res, err).from(before)
	h.audit(c, rec)
	p.Warnings = res.Warnings
	if err != nil {
		return h.applyFailed(c, p, f, err)
	}
	how := "applied (server-side apply)"
	if f.force {
		how = "applied with force (server-side apply)"
	}
	msg := fmt.Sprintf("%s was %s: version %s → %s.", name, how, f.resourceVersion, rec.After)
	if rec.After == f.resourceVersion {
		msg = name + " was already like this: the API server stored nothing new."
	}
	if t.cached {
		h.awaitCache(c, k.ID, name, func(rv string) bool { return rv != f.resourceVersion || rv == rec.After })
	}
	return h.flashAndRedirect(c, "Saved", msg, res.Warnings, t.page)
}

// applyFailed shows a refused server-side apply: a field-manager conflict with
// the managers and their fields (and the offer to force), anything else with
// the API server's message.
func (h *Handlers) applyFailed(c echo.Context, p model.EditPage, f editForm, err error) error {
	conflicts, ok := edit.ApplyConflicts(err, f.yaml)
	if !ok {
		return h.editProblem(c, p, err)
	}
	p.ApplyConflicts = conflicts
	return render(c, http.StatusConflict, pages.Edit(p))
}

func applyRecord(name string, k kube.Kind, f editForm, dryRun bool, res kube.WriteResult, err error) writeRecord {
	rec := writeRecord{Verb: "apply", Kind: k.Singular, Name: name, Before: f.resourceVersion, DryRun: dryRun, Err: err, To: res.Object}
	if f.force {
		rec.Verb = "apply-force"
	}
	if res.Object != nil {
		rec.After = res.Object.GetResourceVersion()
	}
	return rec
}
