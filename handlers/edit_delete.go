package handlers

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// deleteObject shows the confirmation page: the API server's dry run of the
// deletion, what goes with the object, and the box for typing its name.
func (h *Handlers) deleteObject(c echo.Context) error {
	k, err := h.editKind(c)
	if err != nil {
		return err
	}
	return h.showDelete(c, builtinTarget(k, c.Param("name")))
}

func (h *Handlers) showDelete(c echo.Context, t editTarget) error {
	p, _, err := h.deletePage(c, t, "")
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, pages.Delete(p))
}

// confirmDelete deletes after the user typed the name and a new dry run passed;
// only the object with the UID they saw is deleted.
func (h *Handlers) confirmDelete(c echo.Context) error {
	k, err := h.editKind(c)
	if err != nil {
		return err
	}
	return h.confirmDeleteOf(c, builtinTarget(k, c.Param("name")))
}

func (h *Handlers) confirmDeleteOf(c echo.Context, t editTarget) error {
	k, name := t.kind, t.name
	if err := c.Request().ParseForm(); err != nil {
		return bodyTooLarge()
	}
	typed, uid := c.Request().PostForm.Get("confirm"), c.Request().PostForm.Get("uid")
	if strings.TrimSpace(typed) != name {
		p, _, err := h.deletePage(c, t, typed)
		if err != nil {
			return err
		}
		p.Problems = append(p.Problems, model.EditError{Title: "Name not confirmed", Local: true,
			Message: fmt.Sprintf("Type %q exactly to delete it; you typed %q.", name, typed)})
		return render(c, http.StatusUnprocessableEntity, pages.Delete(p))
	}
	if uid == "" {
		return echo.NewHTTPError(http.StatusBadRequest, "The form does not say which object you confirmed. Open the delete page again.")
	}
	ctx := c.Request().Context()
	res, err := h.deps.Editor.Delete(ctx, k, name, types.UID(uid), true)
	// The object as the API server holds it before, read once for both
	// records (edit_before.go); the cache at any version if it cannot be read.
	rec := writeRecord{Verb: "delete", Kind: k.Singular, Name: name, DryRun: true, Err: err}.from(h.serverBefore(c, k, name))
	h.auditBefore(c, &rec)
	h.audit(c, rec)
	if err == nil {
		res, err = h.deps.Editor.Delete(ctx, k, name, types.UID(uid), false)
		rec.DryRun, rec.Err = false, err
		h.audit(c, rec)
	}
	if err != nil {
		p, _, perr := h.deletePage(c, t, typed)
		if perr != nil {
			// The object is gone or unreadable now: the write's own error says more.
			p = h.bareDeletePage(c, t)
		}
		p.DryRunOK = false
		p.Problems = append(p.Problems, edit.Problem(err, ""))
		p.Warnings = append(p.Warnings, res.Warnings...)
		return render(c, problemStatus(err), pages.Delete(p))
	}
	if t.cached {
		h.awaitGone(c, k.ID, name, uid)
	}
	return h.flashAndRedirect(c, "Deleted", fmt.Sprintf("%s %s was deleted.", k.Singular, name), res.Warnings, t.list)
}

func (h *Handlers) bareDeletePage(c echo.Context, t editTarget) model.DeletePage {
	k, name, base := t.kind, t.name, t.page
	crumbs := append(slices.Clone(t.crumbs), model.Crumb{Label: name, Href: base}, model.Crumb{Label: "Delete"})
	return model.DeletePage{
		KindID: string(k.ID), KindTitle: k.Title, Kind: k.Singular, Name: name,
		ActionURL: urls.EditorOf(base).Delete, CancelURL: base,
		Chrome: h.chrome(c, "Delete "+name, t.nav, crumbs...),
	}
}

// deletePage reads the live object, dry-runs its deletion and lists what goes
// with it. A refused dry run is shown on the page (no confirmation box), not
// returned as an error; the returned object is the live one. It writes
// nothing to the audit trail.
func (h *Handlers) deletePage(c echo.Context, t editTarget, typed string) (model.DeletePage, *unstructured.Unstructured, error) {
	k, name := t.kind, t.name
	ctx := c.Request().Context()
	obj, err := h.deps.Editor.Get(ctx, k, name)
	if err != nil {
		return model.DeletePage{}, nil, err
	}
	p := h.bareDeletePage(c, t)
	p.UID, p.Typed = string(obj.GetUID()), typed
	// Showing the page is not an action: this dry run is not recorded (no audit
	// line, no Event), or every visit, prefetch or crawler would write to the
	// trail. The POST that deletes records its own dry run and deletion.
	res, err := h.deps.Editor.Delete(ctx, k, name, obj.GetUID(), true)
	p.Warnings = res.Warnings
	if err != nil {
		p.Problems = append(p.Problems, edit.Problem(err, ""))
	} else {
		p.DryRunOK = true
	}
	p.Consequences = edit.DeleteNotes(k.Singular)
	if k.ID == kube.CRDs {
		p.Consequences = append([]string{h.crdContents(c, obj)}, p.Consequences...)
	}
	return p, obj, nil
}

// crdContents says how many custom resources go with a CRD.
func (h *Handlers) crdContents(c echo.Context, crd *unstructured.Unstructured) string {
	n, err := h.deps.Editor.CountCustomResources(c.Request().Context(), crd)
	what := fmt.Sprintf("%s objects (%s)", orUnknown(n.Kind), n.Resource)
	switch {
	case apierrors.IsForbidden(err):
		return "Deleting it also deletes every " + what + " in every namespace; your identity may not list them, so clusterdesk cannot say how many there are."
	case err != nil:
		return "Deleting it also deletes every " + what + " in every namespace; they could not be counted: " + err.Error()
	case n.Count == 0:
		return "There are no " + what + ": nothing else is deleted with it."
	case n.AtLeast:
		return fmt.Sprintf("Deleting it also deletes at least %d %s, in every namespace.", n.Count, what)
	}
	return fmt.Sprintf("Deleting it also deletes all %d %s, in every namespace.", n.Count, what)
}

func orUnknown(s string) string {
	if s == "" {
		return "custom"
	}
	return s
}
