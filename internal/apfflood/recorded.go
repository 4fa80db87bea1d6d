package apfflood

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// Recorded is what the recorded traffic holds of a flood's series (its
// user, verb, resource and namespace) within the flood's window, by
// instance (TrafficSeries.Instance).
type Recorded struct {
	Requests, Rejected map[string]int64
	// PerSecond lists the buckets, "instance hh:mm:ss requests/rejected".
	PerSecond []string
}

// RecordedFlood sums the traffic ts recorded for user's req in the window
// [since, until) (Result.Since, Result.Until).
func RecordedFlood(ctx context.Context, ts ledger.TrafficStore, since, until time.Time, user string, req Request) (Recorded, error) {
	r := Recorded{Requests: map[string]int64{}, Rejected: map[string]int64{}}
	err := ts.ScanTraffic(ctx, ledger.TrafficQuery{Since: since, Until: until}, func(b *ledger.TrafficBucket) error {
		s := b.Series
		if s.User != user || s.Verb != req.Verb || s.Resource != req.Resource || s.Namespace != req.Namespace {
			return nil
		}
		r.Requests[s.Instance] += b.Requests
		r.Rejected[s.Instance] += b.Rejected
		r.PerSecond = append(r.PerSecond, fmt.Sprintf("%s %s %d/%d", s.Instance, b.Start.Format(time.TimeOnly), b.Requests, b.Rejected))
		return nil
	})
	sort.Strings(r.PerSecond)
	return r, err
}

func (r Recorded) String() string {
	return fmt.Sprintf("requests %v, rejected %v; per second (requests/rejected): %s", r.Requests, r.Rejected, strings.Join(r.PerSecond, ", "))
}
