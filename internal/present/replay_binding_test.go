package present

import (
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/replay"
)

// TestReplayRequestNamesItsBinding: with several bindings, a changed
// request's message says which binding it failed under, as the API
// server's refusal does; the policy's own configuration error names none.
func TestReplayRequestNamesItsBinding(t *testing.T) {
	k := replay.GroupKey{User: "alice", Namespace: "prod", Resource: "configmaps", Operation: "CREATE"}
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	r := ReplayResult(replay.Summary{
		Groups: []replay.Group{{GroupKey: k, NewlyDenied: 2}},
		Changes: []replay.Change{
			{GroupKey: k, Time: at, Name: "a", What: replay.NewlyDenied, Message: "mode forbidden", Binding: "prod-deny"},
			{GroupKey: k, Time: at, Name: "b", What: replay.NewlyDenied, Message: "no such param"},
		},
	}, "the last hour", "the deployed policy")
	if len(r.Groups) != 1 || len(r.Groups[0].Requests) != 2 {
		t.Fatalf("groups %+v", r.Groups)
	}
	if got := r.Groups[0].Requests[0].Message; got != "binding 'prod-deny': mode forbidden" {
		t.Errorf("under a binding: %q", got)
	}
	if got := r.Groups[0].Requests[1].Message; got != "no such param" {
		t.Errorf("the policy's own error: %q", got)
	}
}
