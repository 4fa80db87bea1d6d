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
