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

// What every replay's result words alike, whatever it replayed the
// recorded writes against (a policy, a webhook configuration): its counts,
// why writes were skipped, what it could not know, its groups and requests.

// newReplayResult starts a result with the window, the deployed version's
// words and the time the replay took.
func newReplayResult(window, deployed string, elapsed time.Duration) *model.ReplayResult {
	return &model.ReplayResult{Window: window, Deployed: deployed, Elapsed: elapsed.Round(time.Millisecond).String()}
}

// replayCount is one number of a result or a group, with its test ID
// when it is a headline.
type replayCount struct {
	n         int64
	label, id string
}

// count adds the headline numbers.
func count(r *model.ReplayResult, counts ...replayCount) {
	for _, c := range counts {
		r.Counts = append(r.Counts, model.ReplayCount{Label: c.label, Value: fmt.Sprint(c.n), TestID: c.id})
	}
}

// replayNotes adds why writes were skipped, what the replay could not know
// where it touched this replay (internal/replay's doc.go), and how many
// changed requests are counted but not listed. known is the first note:
// what is today's in this replay.
func replayNotes(r *model.ReplayResult, c replay.Counts, known string, leftOut int64) {
	for _, why := range []string{replay.SkipNotAdmitted, replay.SkipInvalid, replay.SkipNoObject, replay.SkipUnreadable} {
		if n := c.Skipped[why]; n > 0 {
			r.Skipped = append(r.Skipped, fmt.Sprintf("%d %s", n, why))
		}
	}
	r.Notes = append(r.Notes, known)
	if c.OldUnknown > 0 {
		r.Notes = append(r.Notes, plural(int(c.OldUnknown), "update or delete was", "updates or deletes were")+" evaluated without the object before it (its previous write was not recorded).")
	}
	if c.NamespaceGone > 0 {
		r.Notes = append(r.Notes, plural(int(c.NamespaceGone), "request was", "requests were")+" in a namespace that no longer exists (no labels today).")
	}
	if leftOut > 0 {
		r.LeftOut = fmt.Sprintf("%d more changed requests are counted in their groups but not listed.", leftOut)
	}
}

// replayGroup words one group: its key, its counts ("2 newly denied, 1
// newly warned", the zero ones left out) and its listed requests.
func replayGroup(k replay.GroupKey, counts []replayCount, requests []model.ReplayRequest) model.ReplayGroup {
	var parts []string
	for _, c := range counts {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.label))
		}
	}
	ns := k.Namespace
	if ns == "" {
		ns = "(cluster-scoped)"
	}
	return model.ReplayGroup{User: k.User, Namespace: ns, Resource: k.Resource, Operation: k.Operation,
		Summary: strings.Join(parts, ", "), Requests: requests}
}

// replayRequest words the request of one change; what, draft, deployed and
// message are the change's own words.
func replayRequest(at time.Time, k replay.GroupKey, name, auditID, what, draft, deployed, message string) model.ReplayRequest {
	return model.ReplayRequest{Time: at.UTC().Format(time.DateTime), Name: name, What: what, Draft: draft, Deployed: deployed,
		Message: message, AuditID: auditID, Href: ledgerHref(k, name)}
}

// ledgerHref is the ledger's history of the object name, which lists the
// write's entry (its write ID is the entry's), when the object is of one
// of the console's kinds: the ledger keeps entries of those only.
func ledgerHref(k replay.GroupKey, name string) string {
	res, _, _ := strings.Cut(k.Resource, "/") // "resource.group[/subresource]"
	resource, group, _ := strings.Cut(res, ".")
	kind, ok := kube.KindByResource(group, resource)
	if !ok || name == "" {
		return ""
	}
	return urls.LedgerObject(kind.ID, name, "")
}
