package present

import (
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// CSRQueueLiveOf lays out, once for every open queue, a change the queue's
// engine worked out for the named CSRs (csrqueue.Queue.Live, which reads its
// index, not a list of every CSR): their rows as the queue renders them, the
// rows no longer there, and the state tabs' counts over all CSRs (what an
// unfiltered queue shows). A row is selectable when the request is pending
// and decodes; whether the user may decide for its signer is the page's
// business (a row that replaces one keeps the old one's selectability: the
// signer and the request of a CSR never change).
func CSRQueueLiveOf(ch csrqueue.Change, env CSRQueueEnv) model.CSRLiveRows {
	out := model.CSRLiveRows{Total: ch.Total, Tabs: csrTabs(CSRQueueQuery{}, ch.Counts, urls.CSRs),
		Columns: csrQueueHeaders(CSRQueueQuery{}, csrqueue.SortQueue, urls.CSRs)}
	// A group row's actions are offered as the selection boxes are: the page
	// keeps them only where it had them (live-csr.js).
	genv := env
	genv.MayDecide = func(string) bool { return true }
	for _, it := range ch.Rows {
		if it.Storm != nil {
			out.Rows = append(out.Rows, *groupRow(it, genv))
			continue
		}
		row := *queueRow(it, env)
		row.Selectable = it.State == CSRPending && !it.Bad
		out.Rows = append(out.Rows, row)
	}
	for _, r := range ch.Removed {
		if r.Group {
			out.Removed = append(out.Removed, "row-csrs-group-"+r.ID)
		} else {
			out.Removed = append(out.Removed, "row-csrs-"+r.ID)
		}
	}
	return out
}
