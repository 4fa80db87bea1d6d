package present

import (
	"fmt"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// ReplayResult words a replay's summary. window is the window's words ("the
// last 7 days"), deployed which deployed version the draft met.
func ReplayResult(s replay.Summary, window, deployed string) *model.ReplayResult {
	r := &model.ReplayResult{Window: window, Deployed: deployed, Elapsed: s.Elapsed.Round(time.Millisecond).String()}
	count := func(label string, n int64, id string) {
		r.Counts = append(r.Counts, model.ReplayCount{Label: label, Value: fmt.Sprint(n), TestID: id})
	}
	count("writes evaluated", s.Replayed, "replay-evaluated")
	count("skipped", sum(s.Skipped), "replay-skipped")
	count(replay.NewlyDenied, s.NewlyDenied, "replay-newly-denied")
	count(replay.NoLongerDenied, s.NoLongerDenied, "replay-no-longer-denied")
	count(replay.NewlyWarned, s.NewlyWarned, "replay-newly-warned")
	for _, why := range []string{replay.SkipNotAdmitted, replay.SkipNoObject, replay.SkipUnreadable} {
		if n := s.Skipped[why]; n > 0 {
			r.Skipped = append(r.Skipped, fmt.Sprintf("%d %s", n, why))
		}
	}
	// What a replay cannot know (internal/replay's doc.go), said where it
	// touched this replay.
	r.Notes = append(r.Notes, "Namespace labels and params are today's; authorizer checks are not asked again.")
	if s.OldUnknown > 0 {
		r.Notes = append(r.Notes, plural(int(s.OldUnknown), "update or delete was", "updates or deletes were")+" evaluated without the object before it (its previous write was not recorded).")
	}
	if s.NamespaceGone > 0 {
		r.Notes = append(r.Notes, plural(int(s.NamespaceGone), "request was", "requests were")+" in a namespace that no longer exists (no labels today).")
	}
	if s.ChangesLeftOut > 0 {
		r.LeftOut = fmt.Sprintf("%d more changed requests are counted in their groups but not listed.", s.ChangesLeftOut)
	}
	byKey := map[replay.GroupKey][]model.ReplayRequest{}
	for _, c := range s.Changes {
		byKey[c.GroupKey] = append(byKey[c.GroupKey], model.ReplayRequest{
			Time: c.Time.UTC().Format(time.DateTime), Name: c.Name, What: c.What, Draft: c.Draft, Deployed: c.Deployed,
			Message: c.Message, AuditID: c.AuditID, Href: ledgerHref(c),
		})
	}
	for _, g := range s.Groups {
		var parts []string
		for _, p := range []struct {
			n    int64
			what string
		}{{g.NewlyDenied, replay.NewlyDenied}, {g.NoLongerDenied, replay.NoLongerDenied}, {g.NewlyWarned, replay.NewlyWarned}} {
			if p.n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
			}
		}
		ns := g.Namespace
		if ns == "" {
			ns = "(cluster-scoped)"
		}
		r.Groups = append(r.Groups, model.ReplayGroup{User: g.User, Namespace: ns, Resource: g.Resource,
			Operation: g.Operation, Summary: strings.Join(parts, ", "), Requests: byKey[g.GroupKey]})
	}
	return r
}

// ledgerHref is the ledger's history of the object c wrote, which lists
// c's entry (its write ID is the entry's), when the object is of one of the
// console's kinds: the ledger keeps entries of those only.
func ledgerHref(c replay.Change) string {
	res, _, _ := strings.Cut(c.Resource, "/") // "resource.group[/subresource]"
	resource, group, _ := strings.Cut(res, ".")
	k, ok := kube.KindByResource(group, resource)
	if !ok || c.Name == "" {
		return ""
	}
	return urls.LedgerObject(k.ID, c.Name, "")
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}
