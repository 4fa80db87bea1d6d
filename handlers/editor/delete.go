package editor

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/editing"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// deleteObject shows the confirmation page: the API server's dry run of the
// deletion, what goes with the object, and the box for typing its name.
func (h *Handlers) deleteObject(c echo.Context) error {
	k, err := h.editable(c)
	if err != nil {
		return err
	}
	return h.showDelete(c, builtinTarget(k, c.Param("name")))
}

// confirmDelete deletes after the user typed the name and a new dry run passed;
// only the object with the UID they saw is deleted.
func (h *Handlers) confirmDelete(c echo.Context) error {
	k, err := h.editable(c)
	if err != nil {
		return err
	}
	return h.confirmDeleteOf(c, builtinTarget(k, c.Param("name")))
}

func (h *Handlers) bareDeletePage(c echo.Context, t editTarget) model.DeletePage {
	k, name, base := t.kind, t.name, t.page
	crumbs := append(slices.Clone(t.crumbs), model.Crumb{Label: name, Href: base}, model.Crumb{Label: "Delete"})
	return model.DeletePage{
		KindID: string(k.ID), KindTitle: k.Title, Kind: k.Singular, Name: name,
		ActionURL: urls.EditorOf(base).Delete, CancelURL: base,
		Chrome: h.d.Chrome(c, "Delete "+name, t.nav, crumbs...),
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "custom"
	}
	return s
}

func (h *Handlers) showDelete(c echo.Context, t editTarget) error {
	plan, err := h.editorCase(c).PlanDelete(c.Request().Context(), t.kind, t.name)
	if err != nil {
		return err
	}
	return page.Render(c, http.StatusOK, pages.Delete(h.deletePage(c, t, plan, "")))
}

// confirmDeleteOf deletes after the user typed the name: the use case dry-runs
// again, then deletes only the object with the UID they saw.
func (h *Handlers) confirmDeleteOf(c echo.Context, t editTarget) error {
	if err := c.Request().ParseForm(); err != nil {
		return page.BodyTooLarge()
	}
	typed, uid := c.Request().PostForm.Get("confirm"), c.Request().PostForm.Get("uid")
	policy, err := editing.ParsePropagation(c.Request().PostForm.Get("propagation"))
	if err != nil {
		return echo.NewHTTPError(http.StatusBadRequest, err.Error())
	}
	ctx := c.Request().Context()
	if strings.TrimSpace(typed) != t.name {
		plan, err := h.editorCase(c).PlanDelete(ctx, t.kind, t.name)
		if err != nil {
			return err
		}
		p := h.deletePage(c, t, plan, typed)
		p.Propagation = propagationOptions(policy)
		p.Problems = append(p.Problems, model.EditError{Title: "Name not confirmed", Local: true,
			Message: fmt.Sprintf("Type %q exactly to delete it; you typed %q.", t.name, typed)})
		return page.Render(c, http.StatusUnprocessableEntity, pages.Delete(p))
	}
	if uid == "" {
		return echo.NewHTTPError(http.StatusBadRequest, "The form does not say which object you confirmed. Open the delete page again.")
	}
	out, err := h.editorCase(c).Delete(ctx, editing.Deletion{Kind: t.kind, Name: t.name, UID: uid, Cached: t.cached, Propagation: policy})
	if err != nil {
		p := h.bareDeletePage(c, t)
		if out.PlanErr == nil {
			p = h.deletePage(c, t, out.Plan, typed)
			p.Propagation = propagationOptions(policy)
		} // else the object is gone or unreadable now: the write's own error says more.
		p.DryRunOK = false
		p.Problems = append(p.Problems, page.ProblemOf(err, ""))
		p.Warnings = append(p.Warnings, out.Warnings...)
		return page.Render(c, page.ProblemStatus(err), pages.Delete(p))
	}
	return h.flashAndRedirect(c, "Deleted", deletedMessage(t.kind.Singular, t.name, policy), out.Warnings, t.list)
}

// deletePage shows a deletion's plan: the confirmation box when its dry run
// passed, the API server's refusal otherwise, and what goes with the object.
func (h *Handlers) deletePage(c echo.Context, t editTarget, plan editing.DeletePlan, typed string) model.DeletePage {
	p := h.bareDeletePage(c, t)
	p.UID, p.Typed = string(plan.Object.GetUID()), typed
	p.Warnings = plan.Warnings
	if plan.DryRunErr != nil {
		p.Problems = append(p.Problems, page.ProblemOf(plan.DryRunErr, ""))
	} else {
		p.DryRunOK = true
	}
	p.Consequences = edit.DeleteNotes(t.kind.Singular)
	p.Propagation = propagationOptions("")
	if plan.Counted {
		p.PropagationNote = "Its " + orUnknown(plan.CRs.Kind) + " objects are deleted whatever you choose: the API server removes a CRD's objects before the CRD itself. The choice applies to other objects whose ownerReferences name the CRD."
		p.Consequences = append([]string{crdContents(plan.CRs, plan.CountErr)}, p.Consequences...)
	}
	return p
}

// crdContents says how many custom resources go with a CRD.
func crdContents(n kube.CRCount, err error) string {
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
