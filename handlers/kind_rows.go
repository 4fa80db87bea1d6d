package handlers

import (
	"fmt"
	"time"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
	liveupdates "github.com/clusterdesk/clusterdesk/handlers/live"
	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// NewLiveUpdates returns the renderer and stream server for live updates
// (handlers/live), its rows those of the kind registry: build it, give its
// Render to live.NewHub, and put it in Deps.Live.
func NewLiveUpdates(cluster Cluster, streams LiveStreams) *LiveUpdates {
	return liveupdates.NewUpdates(cluster, streams, liveKinds{cluster})
}

// liveKinds is the kind registry as live rows read it (liveupdates.Kinds).
type liveKinds struct{ c Cluster }

// Row renders the generic list row of a kind (its registry entry's row).
func (k liveKinds) Row(kind kube.KindID, name string, now time.Time) (model.Row, bool, error) {
	kp, ok := kinds.Of(kind)
	if !ok {
		return model.Row{}, false, fmt.Errorf("live: no rows for %s", kind)
	}
	return kp.Row(k.c, name, now)
}

func (liveKinds) OwnRows(kind kube.KindID) bool  { return hooksByKind[kind].ownRows }
func (liveKinds) Tickable(kind kube.KindID) bool { return page.Tickable(false, kind) }

func (k liveKinds) Metrics(kind kube.KindID) func(model.Row, present.APFLoadState) model.Row {
	decorate := hooksByKind[kind].listMetrics
	if decorate == nil {
		return nil
	}
	// The row as the list shows it to a user who may read /metrics:
	// decorated by the kind's listMetrics like the full list.
	return func(row model.Row, st present.APFLoadState) model.Row {
		page := model.ListPage{Rows: []model.Row{row}}
		decorate(k.c, kind, &page, st)
		return page.Rows[0]
	}
}
