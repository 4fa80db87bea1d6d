package editor

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// The editor's "Replay against recorded writes" (issue 45): the button
// posts the editor's form, text and all, to its kind's replay route; the
// answer is the editor again, the same text, starting version and write
// mode, with the replay's outcome beside the text where Preview's diff
// goes. The text never leaves the editor, so nothing is lost and Apply is
// one click away: that is why the result is not a page of its own.

// Replayer replays an editor's text against the recorded writes
// (handlers/replay's Handlers).
type Replayer interface {
	// EditorWindows are the windows the editor of kind offers, selected
	// chosen; false when kind has no replay.
	EditorWindows(kind kube.KindID, selected string) ([]model.Option, bool)
	// ReplayEditorText replays text as the signed-in user; chrome is the
	// editor page's.
	ReplayEditorText(c echo.Context, kind kube.KindID, text, window string, chrome model.Chrome) model.ReplayPage
}

// ReplayAccess is a replay route's access check, by kind.
type ReplayAccess map[kube.KindID][]echo.MiddlewareFunc

// RegisterReplay adds the editor's replay routes to e, each behind its
// access checks. They change nothing in the cluster: readPOST marks them so
// (they work in --read-only, where the editor itself, and so Apply, is
// refused); the CSRF guard applies as to every POST. bodyRoute gives them
// the editor's body limit: they carry its text.
func (h *Handlers) RegisterReplay(e *echo.Echo, access ReplayAccess, readPOST, bodyRoute func(string) string) {
	for route, kind := range map[string]kube.KindID{
		urls.PolicyEditorReplayRoute: kube.AdmissionPolicies, urls.BindingEditorReplayRoute: kube.AdmissionPolicyBindings,
		urls.ValidatingWebhookEditorReplayRoute: kube.Webhooks, urls.MutatingWebhookEditorReplayRoute: kube.MutatingWebhooks,
	} {
		e.POST(readPOST(bodyRoute(route)), func(c echo.Context) error { return h.replayEdit(c, kind) }, access[kind]...)
	}
}

// withReplay offers the replay button on p, the editor of k (name "" when
// creating), when k has a replay; window is the one chosen.
func (h *Handlers) withReplay(p *model.EditPage, k kube.KindID, name, window string) {
	if k == kube.FlowSchemas || k == kube.PriorityLevels {
		// The APF what-if takes the text as its draft (handlers/whatif).
		p.WhatIfURL = urls.WhatIf
	}
	if h.d.Replay == nil {
		return
	}
	if w, ok := h.d.Replay.EditorWindows(k, window); ok {
		p.ReplayURL, p.ReplayWindows = urls.EditorReplay(k, name), w
	}
}

// replayEdit replays the editor's text of kind and shows the editor again
// with the outcome beside the text; ?name= is the object being edited,
// none when creating. A text that cannot be replayed is said there (422),
// and nothing ran.
func (h *Handlers) replayEdit(c echo.Context, kind kube.KindID) error {
	k, ok := h.d.Cluster.Kind(kind)
	if !ok || h.d.Replay == nil {
		return echo.NewHTTPError(http.StatusNotFound, "clusterdesk replays no "+string(kind)+".")
	}
	f, err := h.readEditForm(c)
	if err != nil {
		return err
	}
	name := c.QueryParam("name")
	p := h.targetPage(c, builtinTarget(k, name), f.showStatus)
	p.YAML = f.yaml
	if name != "" {
		p.ResourceVersion, p.Base, p.Mode = f.resourceVersion, f.base, f.write
	}
	window := c.Request().PostForm.Get("window")
	h.withReplay(&p, kind, name, window)
	r := h.d.Replay.ReplayEditorText(c, kind, f.yaml, window, p.Chrome)
	p.Replay = &r
	status := http.StatusOK
	if r.Error != "" {
		status = http.StatusUnprocessableEntity
	}
	return page.Render(c, status, pages.Edit(p))
}
