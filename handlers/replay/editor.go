package replay

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// The YAML editor's "Replay against recorded writes" (issue 45): the editor
// (handlers/editor, replay.go) posts its text and shows, beside it, the
// outcome answered here, so that the text, its starting version and the
// write mode never leave the editor's form. The replay is the replay
// page's: the policy's runs as a background job (the editor's script
// follows it as the replay page's does), a webhook configuration's within
// the request; the same parsing and errors, as the signed-in user.

// noWrites is what a replay says when the console records no writes.
const noWrites = "This console records no writes (it runs without a ledger, or the API server's audit webhook is not configured), so there is nothing to replay."

// EditorWindows are the windows the editor of kind offers its replay,
// selected chosen; false when kind has no replay.
func (h *Handlers) EditorWindows(kind kube.KindID, selected string) ([]model.Option, bool) {
	switch kind {
	case kube.AdmissionPolicies, kube.AdmissionPolicyBindings, kube.Webhooks, kube.MutatingWebhooks:
		return windowOptions(selected), true
	}
	return nil, false
}

// ReplayEditorText replays the YAML editor's text of kind over window as
// the signed-in user and answers the outcome; chrome is the editor page's
// (its event stream follows a policy's job, its token cancels it). A text
// that cannot be replayed is the outcome's Error, and nothing ran.
func (h *Handlers) ReplayEditorText(c echo.Context, kind kube.KindID, text, window string, chrome model.Chrome) model.ReplayPage {
	p := model.ReplayPage{Windows: windowOptions(window), Draft: text}
	if why := h.d.Refusal.Of(c); why != "" {
		p.Error = why
		return p
	}
	if h.d.Writes == nil {
		p.Error = noWrites
		return p
	}
	switch kind {
	case kube.Webhooks:
		p.Result, p.Error = h.runWebhooks(c, validatingKind, p)
	case kube.MutatingWebhooks:
		p.Result, p.Error = h.runWebhooks(c, mutatingKind, p)
	case kube.AdmissionPolicies, kube.AdmissionPolicyBindings:
		draft, basis, err := editorDraft(h.d.Cluster, kind, text)
		if err != nil {
			p.Error = err.Error()
			return p
		}
		v, err := parseDraft(draft)
		if err != nil {
			p.Error = err.Error()
			return p
		}
		p.PolicyName, p.Draft, p.Basis = v.Policy.Name, draft, basis
		s, words, _ := h.start(c, p)
		if p.Error = words; words == "" {
			job := h.d.Jobs.Bar(s, chrome.Live.URL, chrome.CSRFToken)
			p.Job = &job
		}
	default:
		p.Error = "clusterdesk replays no " + string(kind) + "."
	}
	return p
}
