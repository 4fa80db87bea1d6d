package urls

import "net/url"

// A replay runs as a background job (handlers/replay, issue 45): its page
// shows the job's progress and then its result; Cancel stops it.
const (
	PolicyReplayJobRoute    = PolicyReplayRoute + "/jobs/:job"
	PolicyReplayCancelRoute = PolicyReplayJobRoute + "/cancel"
)

// PolicyReplayJob is the replay job id of the policy name: its progress,
// then its result.
func PolicyReplayJob(name, id string) string {
	return PolicyReplay(name) + "/jobs/" + url.PathEscape(id)
}

// PolicyReplayCancel cancels the replay job id (a POST).
func PolicyReplayCancel(name, id string) string { return PolicyReplayJob(name, id) + "/cancel" }
