package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// A storm of appends past the size bound: the ledger keeps the newest
// MaxEntries, prunes the oldest first (by the entries' time, not the order
// they came in), and counts what it pruned for size.
func TestAppendingPastTheBoundPrunesOldestFirst(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		const bound, appended = 1000, 2500
		s := open(t, dsn, ledger.Options{MaxEntries: bound})
		// Batches in a shuffled order of time: the oldest go, not the
		// first stored.
		for b := range appended / 100 {
			batch := make([]ledger.Entry, 0, 100)
			start := ((b * 7) % (appended / 100)) * 100
			for i := start; i < start+100; i++ {
				batch = append(batch, entry(fmt.Sprintf("e%05d", i), i))
			}
			appendAll(t, s, batch...)
		}
		var st ledger.Stats
		for deadline := time.Now().Add(30 * time.Second); ; {
			var err error
			if st, err = s.Stats(context.Background()); err != nil {
				t.Fatal(err)
			}
			// The count of pruned entries follows each chunk's commit.
			if (st.Entries <= bound && st.PrunedForSize >= appended-bound) || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond) // polling the condition, bounded above
		}
		if st.Entries != bound || st.MaxEntries != bound || st.PrunedForSize != appended-bound {
			t.Fatalf("after %d appended past a bound of %d: %d entries, %d pruned for size", appended, bound, st.Entries, st.PrunedForSize)
		}
		if want := t0.Add(secs(appended - bound)); !st.Oldest.Equal(want) || !st.Newest.Equal(t0.Add(secs(appended-1))) {
			t.Errorf("kept %s…%s, want the newest %d from %s", st.Oldest, st.Newest, bound, want)
		}
	})
}
