package handlers

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	editorpages "github.com/clusterdesk/clusterdesk/handlers/editor"
	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/editing"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// editorFeature is the YAML editor, its delete confirmation and the pages of
// a CRD's custom resources (handlers/editor).
func editorFeature(h *Handlers) *editorpages.Handlers {
	return editorpages.New(editorpages.Deps{
		Base: h.base(), Cluster: h.deps.Cluster, Editor: h.deps.Editor, Docs: h.deps.Docs, ReadOnly: h.deps.ReadOnly,
		Editable:    h.editKind,
		Audit:       func(c echo.Context) editing.Auditor { return requestAudit{h: h, c: c} },
		ParseForm:   parseEditorForm,
		Flash:       h.flashAndRedirect,
		Unreachable: unreachablePage,
		Cleanup:     h.cleanupPages,
		Access:      h.deps.Access,
	})
}

// editKind resolves :kind for the editor's and the cleanup's routes: a kind
// the console writes, whose served version it knows.
func (h *Handlers) editKind(c echo.Context) (kube.Kind, error) {
	k, _, err := h.kindFor(c)
	if err == nil && !kinds.Editable(k.ID) {
		err = echo.NewHTTPError(http.StatusNotFound, "clusterdesk shows "+k.Title+" read-only; change them with the tool that installed them.")
	}
	if err == nil && k.Version == "" {
		err = echo.NewHTTPError(http.StatusServiceUnavailable, "clusterdesk does not know yet which version of "+k.Title+" the API server serves; try again in a moment.")
	}
	return k, err
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

// apiVersion is an object's apiVersion as its kind's group and version
// (handlers/page/problem.go), for the CSR decisions' and the audit's records.
var apiVersion = page.APIVersion
