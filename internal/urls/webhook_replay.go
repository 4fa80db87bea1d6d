package urls

// The replay of the recorded writes against a draft of a webhook
// configuration (handlers/replay, issue 45), beside the policy's
// (PolicyReplayRoute): under the API's resource names, as the policy's is.
const (
	ValidatingWebhookReplayRoute = "/validatingwebhookconfigurations/:name" + replaySuffix
	MutatingWebhookReplayRoute   = "/mutatingwebhookconfigurations/:name" + replaySuffix
)

// ValidatingWebhookReplay is the replay of a draft of the
// ValidatingWebhookConfiguration name.
func ValidatingWebhookReplay(name string) string {
	return Object("validatingwebhookconfigurations", name) + replaySuffix
}

// MutatingWebhookReplay is the replay of a draft of the
// MutatingWebhookConfiguration name.
func MutatingWebhookReplay(name string) string {
	return Object("mutatingwebhookconfigurations", name) + replaySuffix
}
