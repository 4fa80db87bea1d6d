// Package editor is the YAML editor's handlers: the editor of one of the
// console's kinds (/:kind/:name/edit, preview, apply, rebase; /:kind/-/new and
// create), the same editor for a CRD's custom resources, the delete
// confirmation of both, and the pages that list and show a CRD's custom
// resources. The use case (read, dry run, update or server-side apply,
// rebase, delete by UID) is internal/editing.
package editor

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/editing"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/internal/writeaudit"
)

// Body bounds the bodies of the routes that carry an editor's text (and its
// starting version, compressed); the handlers' body limit applies it
// (handlers/edit_limit.go says why it is this size).
const Body = "6MiB"

// BodyBytes is Body in bytes, for the page's script. It is also the most a
// form's starting version may expand to (edit.MaxText).
const BodyBytes = edit.MaxText

// Deps are the editor's ports.
type Deps struct {
	page.Base
	// Cluster is the shared cache: the CRDs, the server version the field
	// documentation depends on, and what writes wait to see.
	Cluster ports.Cluster
	// Editor reads and writes objects as the user.
	Editor ports.ObjectEditor
	// Docs is the field documentation; nil leaves the panel out.
	Docs     ports.FieldDocs
	ReadOnly bool // the instance pages offer no New, Edit, Delete or cleanup
	// Audit is the audit trail of the writes (internal/writeaudit): each
	// request's are recorded under its user.
	Audit *writeaudit.Trail
	// Flash shows a write's result and warnings on the page it redirects to.
	Flash page.Flash
	// Cleanup says who may delete a kind's objects everywhere, and Access
	// asks the API server as the user (per namespace, NamespaceAccess): the
	// tick boxes of a page of a CRD's objects (ticks.go).
	Cleanup Cleanup
	Access  ports.Access
	// Replay replays an editor's text against the recorded writes before
	// it is applied (replay.go); nil offers no replay.
	Replay Replayer
}

// Cleanup is the cleanup's answer the tick boxes of a CRD's objects read
// (handlers/cleanup's Handlers, links.go).
type Cleanup interface {
	// MayDelete reports whether the user may delete k's objects in every namespace.
	MayDelete(c echo.Context, k kube.Kind) bool
}

// Handlers serves the editor's routes.
type Handlers struct{ d Deps }

// New builds the editor's handlers.
func New(d Deps) *Handlers { return &Handlers{d: d} }

// RegisterInstances adds the pages of a CRD's custom resources to e: the
// API server's table, and one object's YAML (cr.go). They read, so they work
// in --read-only; crds is the CRDs' access check.
func (h *Handlers) RegisterInstances(e *echo.Echo, crds echo.MiddlewareFunc) {
	e.GET(urls.CRInstancesRoute, h.crInstances, crds)
	e.GET(urls.CRInstanceRoute, h.crInstance, crds)
}

// Register adds the editor's routes to mutating (the read-only mode's group:
// in read-only mode they are refused rather than offering changes that would
// be refused), each behind its kind's access check: ofKind for /:kind, crds
// for a CRD's custom resources. bodyRoute marks a route that carries an
// editor's text, which gets Body as its body limit (handlers/edit_limit.go).
func (h *Handlers) Register(mutating *echo.Group, ofKind, crds echo.MiddlewareFunc, bodyRoute func(string) string) {
	mutating.GET(urls.NewRoute, h.newObject, ofKind)
	mutating.POST(bodyRoute(urls.CreateRoute), h.createObject, ofKind)
	mutating.GET(urls.EditRoute, h.editObject, ofKind)
	mutating.POST(bodyRoute(urls.PreviewRoute), h.previewEdit, ofKind)
	mutating.POST(bodyRoute(urls.ApplyRoute), h.applyEdit, ofKind)
	mutating.POST(bodyRoute(urls.RebaseRoute), h.rebaseEdit, ofKind)
	// The same editor for a CRD's custom resources (cr.go); ns is "_" when cluster-scoped.
	mutating.GET(urls.CRNewRoute, h.newCR, crds)
	mutating.POST(bodyRoute(urls.CRCreateRoute), h.createCR, crds)
	mutating.GET(urls.CREditRoute, h.editCR, crds)
	mutating.POST(bodyRoute(urls.CRPreviewRoute), h.previewCR, crds)
	mutating.POST(bodyRoute(urls.CRApplyRoute), h.applyCR, crds)
	mutating.POST(bodyRoute(urls.CRRebaseRoute), h.rebaseCR, crds)
	mutating.GET(urls.CRDeleteRoute, h.deleteCR, crds)
	mutating.POST(urls.CRDeleteRoute, h.confirmDeleteCR, crds)
	mutating.GET(urls.DeleteRoute, h.deleteObject, ofKind)
	mutating.POST(urls.DeleteRoute, h.confirmDelete, ofKind)
}

// editable resolves :kind to a kind the console writes (page.EditableKindFor).
func (h *Handlers) editable(c echo.Context) (kube.Kind, error) {
	return page.EditableKindFor(c, h.d.Cluster)
}

// editorCase is the editor's use case for this request's user: its writes are
// audited under their name.
func (h *Handlers) editorCase(c echo.Context) *editing.Service {
	return &editing.Service{API: h.d.Editor, Cache: h.d.Cluster, Audit: h.d.Audit.For(c.Request().Context()), Check: checkPolicy}
}
