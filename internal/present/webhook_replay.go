package present

import (
	"fmt"

	"github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// WebhookReplayResult words a webhook configuration's replay: which
// requests the draft would send to its webhooks that the deployed version
// did not, and the reverse, and which would newly fail were a webhook
// unreachable. window and deployed as ReplayResult's.
func WebhookReplayResult(s replay.WebhookSummary, window, deployed string) *model.ReplayResult {
	r := newReplayResult(window, deployed, s.Elapsed)
	count(r, replayCount{s.Replayed, "writes evaluated", "replay-evaluated"}, replayCount{sum(s.Skipped), "skipped", "replay-skipped"},
		replayCount{s.NewlySent, replay.NewlySent, "replay-newly-sent"}, replayCount{s.NoLongerSent, replay.NoLongerSent, "replay-no-longer-sent"},
		replayCount{s.NewlyFailing, replay.NewlyFailing, "replay-newly-failing"})
	replayNotes(r, s.Counts, "Namespace labels are today's; matchPolicy Equivalent is approximated (a rule meets the resource and version a request was sent as, not its equivalents); authorizer checks in matchConditions are not asked again (they err, and failurePolicy decides); a mutating webhook's selectors and conditions meet the object as stored, after every mutation.", s.ChangesLeftOut)
	tally := func(t replay.WebhookTally) string {
		return fmt.Sprintf("%d sent, %d would fail if unreachable, %d refused before the call", t.Sent, t.FailsIfUnreachable, t.Refused)
	}
	r.Notes = append(r.Notes, "Draft: "+tally(s.Draft)+". Deployed: "+tally(s.Deployed)+". Each request is counted once per webhook.")
	if s.Exempt > 0 {
		r.Notes = append(r.Notes, plural(int(s.Exempt), "write was", "writes were")+" of admission configuration itself, which no webhook is called for.")
	}
	byKey := map[replay.GroupKey][]model.ReplayRequest{}
	for _, c := range s.Changes {
		msg := "webhook " + c.Webhook
		if c.Why != "" {
			msg += ": " + c.Why
		}
		byKey[c.GroupKey] = append(byKey[c.GroupKey], replayRequest(c.Time, c.GroupKey, c.Name, c.AuditID, c.What, c.Draft, c.Deployed, msg))
	}
	for _, g := range s.Groups {
		r.Groups = append(r.Groups, replayGroup(g.GroupKey, []replayCount{{g.NewlySent, replay.NewlySent, ""},
			{g.NoLongerSent, replay.NoLongerSent, ""}, {g.NewlyFailing, replay.NewlyFailing, ""}}, byKey[g.GroupKey]))
	}
	return r
}
