package urls

import "net/url"

// The YAML editor's "Replay against recorded writes" (handlers/editor,
// issue 45): the editor's form, text and all, posted to its kind's
// /-/replay ("-" is no object's name, so it shadows none, and as a static
// segment it wins over the replay pages' /:name/replay). The answer is the
// editor again, the replay's result beside the text.
const (
	PolicyEditorReplayRoute            = "/validatingadmissionpolicies" + editorReplaySuffix
	BindingEditorReplayRoute           = "/validatingadmissionpolicybindings" + editorReplaySuffix
	ValidatingWebhookEditorReplayRoute = "/validatingwebhooks" + editorReplaySuffix
	MutatingWebhookEditorReplayRoute   = "/mutatingwebhooks" + editorReplaySuffix
	editorReplaySuffix                 = "/-" + replaySuffix
)

// EditorReplay is where the editor of kind sends its text to be replayed;
// name is the object being edited ("" when creating), carried in the query
// so that the editor comes back as the editor of that object.
func EditorReplay[K ~string](kind K, name string) string {
	p := List(kind) + editorReplaySuffix
	if name == "" {
		return p
	}
	return WithQuery(p, url.Values{"name": {name}})
}
