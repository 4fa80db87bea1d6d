package urls

// The replay of the recorded writes against a draft of a webhook
// configuration (handlers/replay, issue 45), beside the policy's
// (PolicyReplayRoute): under the kind's own pages (/validatingwebhooks/<name>),
// as the policy's replay is under the policy's.
const (
	ValidatingWebhookReplayRoute = "/validatingwebhooks/:name" + replaySuffix
	MutatingWebhookReplayRoute   = "/mutatingwebhooks/:name" + replaySuffix
)

// ValidatingWebhookReplay is the replay of a draft of the
// ValidatingWebhookConfiguration name.
func ValidatingWebhookReplay(name string) string {
	return Object("validatingwebhooks", name) + replaySuffix
}

// MutatingWebhookReplay is the replay of a draft of the
// MutatingWebhookConfiguration name.
func MutatingWebhookReplay(name string) string {
	return Object("mutatingwebhooks", name) + replaySuffix
}
