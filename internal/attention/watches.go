package attention

import (
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// WatchLost is a kind's cache status after a sync followed by an error: the
// lists serve what the cache held when the watch broke, which may be stale,
// while the informer retries.
func WatchLost(st kube.KindStatus) bool {
	return st.State == kube.StateError && !st.SyncedAt.IsZero()
}

// Watches is the kinds whose watch is lost; one item per kind, so each is
// shown to who may list that kind only. Age is how long since the cache was
// last synced. The item has no link of its own: its one entry links the
// kind's list.
func Watches(statuses []kube.KindStatus, now time.Time) []Item {
	var out []Item
	for _, st := range statuses {
		if !WatchLost(st) {
			continue
		}
		e := Entry{Name: st.Kind.Title, Severity: Danger, Age: now.Sub(st.SyncedAt), Href: urls.List(st.Kind.ID)}
		if st.Err != nil {
			e.Note = []string{st.Err.Error()}
		}
		out = append(out, Item{Concern: WatchesLost, Severity: Danger, Kinds: []kube.KindID{st.Kind.ID}, Count: 1,
			Entries: []Entry{e}})
	}
	return out
}
