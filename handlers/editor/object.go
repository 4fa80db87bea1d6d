package editor

import (
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// editForm is what every editor form posts.
type editForm struct {
	yaml            string // normalized to \n line breaks
	resourceVersion string // the version the user started from
	base            string // EncodeBase of the text the user started from
	baseText        string // base decoded, once per request; it only drives what the user is shown
	showStatus      bool
	write           model.WriteMode // how an existing object is written
	force           bool            // server-side apply takes over fields other managers own
	forceConfirmed  bool            // the user ticked the box that confirms force
}

// readEditForm parses the form. A body over the limit is refused here too (a
// body without Content-Length is only cut while it is read).
func (h *Handlers) readEditForm(c echo.Context) (editForm, error) {
	if err := page.ParseForm(c); err != nil {
		return editForm{}, err
	}
	f := c.Request().PostForm
	form := editForm{
		yaml:            edit.Normalize(f.Get("yaml")),
		resourceVersion: f.Get("resourceVersion"),
		base:            f.Get("base"),
		showStatus:      f.Get("status") == "1",
		write:           writeMode(f.Get("write")),
		force:           f.Get("force") == "1",
		forceConfirmed:  f.Get("forceConfirm") == "1",
	}
	var err error
	if form.baseText, err = decodeFormBase(form.base); err != nil {
		return editForm{}, err
	}
	return form, nil
}

// editTarget is what an editor page addresses and where its pages are: one of
// the console's kinds at /:kind/:name, or a custom resource at
// /crds/:crd/instances/:ns/:obj (cr.go).
type editTarget struct {
	kind      kube.Kind // for a namespaced custom resource, kind.Namespace is the object's namespace
	name      string    // "" when creating
	page      string    // the object's page, and the prefix of /edit, /preview, /apply, /rebase
	list      string    // where the object is listed (and where Cancel goes when creating)
	createURL string    // the create form's action
	crumbs    []model.Crumb
	docsKey   string      // what the field documentation depends on besides the server version
	cached    bool        // the shared cache holds the kind: writes wait until it shows them
	nav       kube.KindID // the kind the navigation marks as current
	// namespaced: the objects live in namespaces; a new one's namespace comes from its metadata.
	namespaced bool
	pageOf     func(namespace, name string) string // the page of an object, e.g. one just created
}

// builtinTarget is the editor target of /:kind/:name (name "" to create).
func builtinTarget(k kube.Kind, name string) editTarget {
	t := editTarget{kind: k, name: name, list: urls.List(k.ID), createURL: urls.Create(k.ID),
		crumbs: []model.Crumb{{Label: k.Title, Href: urls.List(k.ID)}}, cached: true, nav: k.ID,
		pageOf: func(_, name string) string { return urls.Object(k.ID, name) }}
	if name != "" {
		t.page = urls.Object(k.ID, name)
	}
	return t
}

func (h *Handlers) targetPage(c echo.Context, t editTarget, showStatus bool) model.EditPage {
	k, name := t.kind, t.name
	p := model.EditPage{KindID: string(k.ID), KindTitle: k.Title, Kind: k.Singular, Name: name, ShowStatus: showStatus, Namespace: k.Namespace,
		MaxBytes: BodyBytes}
	p.Docs, p.DocsNote = h.fieldDocs(c, k, t.docsKey)
	h.withReplay(&p, k.ID, name, "") // replay.go
	if name == "" {
		p.Create, p.ApplyLabel = true, "Create"
		p.ApplyURL, p.CancelURL = t.createURL, t.list
		p.Chrome = h.d.Chrome(c, "New "+k.Singular, navKind(t), append(slices.Clone(t.crumbs), model.Crumb{Label: "New"})...)
		return p
	}
	base := t.page
	p.ApplyLabel, p.Mode = "Apply", model.WriteUpdate
	ed := urls.EditorOf(base)
	p.ApplyURL, p.PreviewURL, p.RebaseURL, p.CancelURL = ed.Apply, ed.Preview, ed.Rebase, base
	p.StatusURL = ed.Edit
	if !showStatus {
		p.StatusURL += "?status=1"
	}
	p.Chrome = h.d.Chrome(c, "Edit "+name, navKind(t), append(slices.Clone(t.crumbs), model.Crumb{Label: name, Href: base}, model.Crumb{Label: "Edit"})...)
	return p
}

// navKind is the kind the navigation marks as current: a custom resource's
// pages belong to CRDs.
func navKind(t editTarget) kube.KindID { return t.nav }

func writeMode(v string) model.WriteMode {
	if v == string(model.WriteApply) {
		return model.WriteApply
	}
	return model.WriteUpdate
}

// fieldDocs returns the kind's documented fields, or why there are none. The
// panel is a help: failing to read the document never stops the editor.
func (h *Handlers) fieldDocs(c echo.Context, k kube.Kind, key string) ([]model.SchemaNode, string) {
	if h.d.Docs == nil {
		return nil, ""
	}
	// A CRD's document changes with the CRD, not with the server: key says which one.
	fields, err := h.d.Docs.Fields(c.Request().Context(), k, strings.TrimSpace(h.d.Cluster.ServerVersion()+" "+key))
	if err != nil {
		h.d.Log.Warn("field docs unavailable", "kind", k.ID, "err", err)
		return nil, "The API server's documentation of " + k.Title + " could not be read: " + err.Error()
	}
	return fields, ""
}

// editTargetOf resolves /:kind/:name for the editor routes.
func (h *Handlers) editTargetOf(c echo.Context) (editTarget, error) {
	k, err := h.editable(c)
	if err != nil {
		return editTarget{}, err
	}
	return builtinTarget(k, c.Param("name")), nil
}

// editObject shows the editor with the live object read from the API server.
func (h *Handlers) editObject(c echo.Context) error {
	t, err := h.editTargetOf(c)
	if err != nil {
		return err
	}
	return h.showEditor(c, t)
}

func (h *Handlers) showEditor(c echo.Context, t editTarget) error {
	show := c.QueryParam("status") == "1"
	obj, err := h.editorCase(c).Read(c.Request().Context(), t.kind, t.name)
	if err != nil {
		return err
	}
	text, err := edit.Text(obj, show)
	if err != nil {
		return err
	}
	p := h.targetPage(c, t, show)
	p.YAML, p.ResourceVersion, p.Base = text, obj.GetResourceVersion(), edit.EncodeBase(text)
	if c.QueryParam("write") == string(model.WriteApply) {
		p.Mode = model.WriteApply
	}
	return page.Render(c, http.StatusOK, pages.Edit(p))
}

// previewEdit dry-runs the update the Apply button would send and shows the
// difference between the version the user started from and what the API
// server would store.
func (h *Handlers) previewEdit(c echo.Context) error {
	t, err := h.editTargetOf(c)
	if err != nil {
		return err
	}
	return h.update(c, t, true)
}

// applyEdit sends the update for real; on success the browser goes to the
// object's page with the result, otherwise the editor shows why, with the
// user's text.
func (h *Handlers) applyEdit(c echo.Context) error {
	t, err := h.editTargetOf(c)
	if err != nil {
		return err
	}
	return h.update(c, t, false)
}

// previewDiff compares the text the user started from (the base, as the
// editor showed it) with what the server would store, rendered the same way.
func (h *Handlers) previewDiff(f editForm, result *unstructured.Unstructured, fromLabel string) (model.Diff, error) {
	after, err := edit.Text(result, f.showStatus)
	if err != nil {
		return model.Diff{}, err
	}
	d := page.DiffOf("What the API server would store (dry run)", fromLabel, "after "+applyWord(f), f.baseText, after)
	if len(d.Lines) == 0 && !d.TooLarge {
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
	if u, ok := page.Unreachable(err); ok {
		// No answer from the API server: say so as the error pages do (whether
		// the request can have reached it), with Go's error as the detail.
		p.Problems = append(p.Problems, model.EditError{Title: u.Title, Message: u.Message, Causes: []model.Cause{{Message: err.Error()}}})
		return page.Render(c, u.Status, pages.Edit(p))
	}
	p.Problems = append(p.Problems, page.ProblemOf(err, p.YAML))
	return page.Render(c, page.ProblemStatus(err), pages.Edit(p))
}

// rebaseEdit carries the user's text onto the current version after a
// conflict: mode "merge" replays their changes onto it (a three-way merge by
// lines), mode "mine" keeps their text as it is. It writes nothing: the user
// previews and applies again, now against the current version.
func (h *Handlers) rebaseEdit(c echo.Context) error {
	t, err := h.editTargetOf(c)
	if err != nil {
		return err
	}
	return h.rebase(c, t)
}

// newObject shows the create page with an example of the kind.
func (h *Handlers) newObject(c echo.Context) error {
	k, err := h.editable(c)
	if err != nil {
		return err
	}
	text, ok, err := edit.Example(k.Singular, page.APIVersion(k))
	if err != nil {
		return err
	}
	if !ok {
		text = "apiVersion: " + page.APIVersion(k) + "\nkind: " + k.Singular + "\nmetadata:\n  name: \n"
	}
	p := h.targetPage(c, builtinTarget(k, ""), false)
	p.YAML = text
	return page.Render(c, http.StatusOK, pages.Edit(p))
}

// createObject previews (op=preview) or performs the creation.
func (h *Handlers) createObject(c echo.Context) error {
	k, err := h.editable(c)
	if err != nil {
		return err
	}
	return h.create(c, builtinTarget(k, ""))
}

// flashAndRedirect shows a write's result and warnings on the page it goes to.
func (h *Handlers) flashAndRedirect(c echo.Context, title, msg string, warnings []string, to string) error {
	return h.d.Flash.AndRedirect(c, title, msg, warnings, to)
}
