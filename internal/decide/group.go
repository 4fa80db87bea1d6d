package decide

import "context"

// Group writes the confirmed preview of a storm group action as user: approve
// holds at most one request (the newest, or none for deny-all) and deny any
// number. Each request is decided on its own, on the object with the UID the
// preview showed, so a request replaced since is refused on its own line and
// the others proceed. The storm may have changed since the preview (grown, or
// partly decided by someone else): the refs say what the person confirmed and
// the API server decides, request by request, whether they may. A confirmation
// that contradicts itself is refused with an *InvalidError before any write.
func (s Decisions) Group(ctx context.Context, user string, approve, deny []Ref, text string) ([]Decision, error) {
	switch n := len(approve) + len(deny); {
	case len(approve) > 1:
		return nil, invalidf("A group action approves at most one request.")
	case n == 0:
		return nil, invalidf("The confirmation names no request; open the preview again.")
	case n > MaxBatch:
		return nil, invalidf("%d requests in one step; a step decides at most %d.", n, MaxBatch)
	}
	if len(approve) == 1 {
		for _, d := range deny {
			if d.Name == approve[0].Name {
				return nil, invalidf("%s is both approved and denied; open the preview again.", d.Name)
			}
		}
	}
	jobs := make([]job, 0, len(approve)+len(deny))
	for _, ref := range approve {
		jobs = append(jobs, job{ref: ref, approve: true, user: user, text: text})
	}
	for _, ref := range deny {
		jobs = append(jobs, job{ref: ref, user: user, text: text})
	}
	return s.all(ctx, jobs), nil
}
