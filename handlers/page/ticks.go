package page

import (
	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/cleanup"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// A list's rows and the live rows that replace them (handlers/live) carry
// the same tick column: which kinds get one is the kind registry's
// (Tickable); the box is built here for both.

// WithTick is row in a tick column, its box valued.
func WithTick(c ports.Cluster, id kube.KindID, row model.Row) model.Row {
	row.TickColumn, row.Tick = true, TickValue(c, id, row.Name)
	return row
}

// TickValue is a row's tick box value (cleanup.Ref.Value: its uid makes the
// preview refuse an object deleted and created again under the same name),
// "" (no box) for an object the cache no longer holds.
func TickValue(c ports.Cluster, id kube.KindID, name string) string {
	m, err := c.Meta(id, name)
	if err != nil || m.GetUID() == "" {
		return ""
	}
	return cleanup.Ref{UID: string(m.GetUID()), Name: name}.Value()
}

// Tickable reports whether kind's list rows carry cleanup tick boxes: the
// condition of the cleanup links (handlers/cleanup, links.go) without their
// fragment test, so a swapped table keeps its boxes. It depends on the kind
// and the console's mode only, never on the user: live rows, rendered once
// for every viewer, carry the same tick column as the page's header.
func Tickable(readOnly bool, id kube.KindID) bool {
	k, _ := kinds.Of(id)
	return !readOnly && kinds.Editable(id) && k.Candidates != nil
}
