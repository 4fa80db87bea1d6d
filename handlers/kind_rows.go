package handlers

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	liveupdates "github.com/clusterdesk/clusterdesk/handlers/live"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// rowFunc renders one object's list row; found is false for an object that no
// longer exists.
type rowFunc func(c Cluster, name string, now time.Time) (row model.Row, found bool, err error)

// rowOf builds a rowFunc from a kind's getter and list presenter: the row of a
// one-object list is exactly the row the full list shows.
func rowOf[T any](get func(Cluster, string) (T, error), list func([]T, present.ListQuery, time.Time) model.ListPage) rowFunc {
	return func(c Cluster, name string, now time.Time) (model.Row, bool, error) {
		o, err := get(c, name)
		if apierrors.IsNotFound(err) {
			return model.Row{}, false, nil
		}
		if err != nil {
			return model.Row{}, false, err
		}
		p := list([]T{o}, present.ListQuery{}, now)
		if len(p.Rows) != 1 {
			return model.Row{}, false, fmt.Errorf("live: %T list of one gave %d rows", o, len(p.Rows))
		}
		return p.Rows[0], true, nil
	}
}

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
	kp, ok := pagesByKind[kind]
	if !ok {
		return model.Row{}, false, fmt.Errorf("live: no rows for %s", kind)
	}
	return kp.row(k.c, name, now)
}

func (liveKinds) OwnRows(kind kube.KindID) bool  { return pagesByKind[kind].ownRows }
func (liveKinds) Tickable(kind kube.KindID) bool { return tickable(false, kind) }

func (k liveKinds) Metrics(kind kube.KindID) func(model.Row, present.APFLoadState) model.Row {
	decorate := pagesByKind[kind].listMetrics
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
