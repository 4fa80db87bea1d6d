package whatif

import (
	"reflect"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

func TestIncidentsJoinMinutesUpToAFiveMinuteLull(t *testing.T) {
	at := func(min int, n int64) ledger.MinuteRejections {
		return ledger.MinuteRejections{Minute: t0.Add(time.Duration(min) * time.Minute), Rejected: n}
	}
	// 0, 1 and 5 (a lull of 3 minutes): one incident; 11 (a lull of 5):
	// another; 30: a third.
	got := Incidents([]ledger.MinuteRejections{at(0, 1), at(1, 2), at(5, 3), at(11, 4), at(30, 5)}, 2)
	want := []Incident{
		{Start: t0.Add(30 * time.Minute), End: t0.Add(31 * time.Minute), Rejected: 5},
		{Start: t0.Add(11 * time.Minute), End: t0.Add(12 * time.Minute), Rejected: 4},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("newest two incidents %+v, want %+v", got, want)
	}
	if all := Incidents([]ledger.MinuteRejections{at(0, 1), at(1, 2), at(5, 3)}, 10); len(all) != 1 || all[0].Rejected != 6 ||
		!all[0].End.Equal(t0.Add(6*time.Minute)) {
		t.Errorf("one incident: %+v", all)
	}
}

// TestListSeatsAsTheWorkEstimator: a seat per 100 kB the LIST holds in
// memory at once, at most 1 MB from the watch cache, at least one, at most
// the level's max seats; unknown resources one seat.
func TestListSeatsAsTheWorkEstimator(t *testing.T) {
	for _, c := range []struct {
		objects, bytes int64
		levelMax, want int
	}{
		{18, 3798, 0, 1},              // the devcluster's ConfigMaps
		{152, 15_374_344, 0, 10},      // its CRDs, megabyte schemas: 1 MB from the cache
		{1500, 300_000, 0, 3},         // 300 kB
		{1500, 300_000, 2, 2},         // a level whose max seats are 2
		{40, 0, 0, 10},                // counted, no size: the estimator's 1.5 MB each
		{0, 0, 0, 1},                  // not counted
		{100_000, 200_000_000, 0, 10}, // 100,000 pods
	} {
		if got := listSeats(c.objects, c.bytes, c.levelMax); got != c.want {
			t.Errorf("%d objects of %d bytes (level max %d): %d seats, want %d", c.objects, c.bytes, c.levelMax, got, c.want)
		}
	}
}
