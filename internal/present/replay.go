package present

import (
	"github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// ReplayResult words a replay's summary. window is the window's words ("the
// last 7 days"), deployed which deployed version the draft met.
func ReplayResult(s replay.Summary, window, deployed string) *model.ReplayResult {
	r := newReplayResult(window, deployed, s.Elapsed)
	count(r, replayCount{s.Replayed, "writes evaluated", "replay-evaluated"}, replayCount{sum(s.Skipped), "skipped", "replay-skipped"},
		replayCount{s.NewlyDenied, replay.NewlyDenied, "replay-newly-denied"}, replayCount{s.NoLongerDenied, replay.NoLongerDenied, "replay-no-longer-denied"},
		replayCount{s.NewlyWarned, replay.NewlyWarned, "replay-newly-warned"})
	replayNotes(r, s.Counts, "Namespace labels and params are today's; authorizer checks are not asked again.", s.ChangesLeftOut)
	byKey := map[replay.GroupKey][]model.ReplayRequest{}
	for _, c := range s.Changes {
		byKey[c.GroupKey] = append(byKey[c.GroupKey], replayRequest(c.Time, c.GroupKey, c.Name, c.AuditID, c.What, c.Draft, c.Deployed, bindingMessage(c.Binding, c.Message)))
	}
	for _, g := range s.Groups {
		r.Groups = append(r.Groups, replayGroup(g.GroupKey, []replayCount{{g.NewlyDenied, replay.NewlyDenied, ""},
			{g.NoLongerDenied, replay.NoLongerDenied, ""}, {g.NewlyWarned, replay.NewlyWarned, ""}}, byKey[g.GroupKey]))
	}
	return r
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// bindingMessage is a change's message with the binding it failed under, in
// the words of the API server's own refusal ("ValidatingAdmissionPolicy 'p'
// with binding 'b' denied request: …", k8s.io/apiserver's
// pkg/admission/plugin/policy/validating/dispatcher.go): with several
// bindings, which one decided.
func bindingMessage(binding, message string) string {
	if binding == "" || message == "" {
		return message
	}
	return "binding '" + binding + "': " + message
}
