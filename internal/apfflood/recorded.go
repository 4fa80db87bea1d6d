package apfflood

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
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

// WaitRecorded waits (bounded: the audit webhook's batches come within a
// second or two) until ts holds as many of res's requests and 429s on
// instance as the client counted, and returns what it holds; it fails the
// test with what it holds when that does not happen.
func WaitRecorded(t testing.TB, ts ledger.TrafficStore, res Result, instance, user string, req Request) Recorded {
	t.Helper()
	const wait = 60 * time.Second
	for deadline := time.Now().Add(wait); ; time.Sleep(250 * time.Millisecond) {
		rec, err := RecordedFlood(context.Background(), ts, res.Since(), res.Until(), user, req)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Requests[instance] == res.Sent && rec.Rejected[instance] == res.TooMany {
			return rec
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v the recorded traffic of %s in [%s, %s) holds %s; the client sent %d to %s and got %d 429s",
				wait, user, res.Since().Format(time.TimeOnly), res.Until().Format(time.TimeOnly), rec, res.Sent, instance, res.TooMany)
		}
	}
}
