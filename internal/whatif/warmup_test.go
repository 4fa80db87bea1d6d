package whatif

import (
	"context"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// TestAWindowOpeningInAStormStartsWithItsQueuesFull: a window that opens
// ten seconds into the flood is simulated from the minute before it, so
// its level starts saturated, its queues full, as the API server's was:
// without the warm-up the idle start takes the first second's excess into
// empty queues (the flow's hand: 2 queues of 50) and the window's
// rejections come out short.
// Only the window's buckets are read and reported: a user seen before it
// alone is no flow of the result.
func TestAWindowOpeningInAStormStartsWithItsQueuesFull(t *testing.T) {
	ts := store(t)
	flood(t, ts)
	early := ledger.TrafficBucket{Start: t0.Add(2 * time.Second), Width: time.Second, Requests: 3,
		Series: ledger.TrafficSeries{Instance: "10.0.0.1:6443", User: "early", Groups: []string{"system:authenticated"}, Verb: "get", Resource: "pods", Namespace: "x"}}
	if err := ts.AppendTraffic(context.Background(), []ledger.TrafficBucket{early}); err != nil {
		t.Fatal(err)
	}
	cur := current()
	// Long queues: 4 of 50; the flooder's hand of 2 holds 100.
	cur.Levels[0].Spec.Limited.LimitResponse.Queuing.QueueLengthLimit = 50
	in := Input{Traffic: ts, Since: t0.Add(10 * time.Second), Until: t0.Add(20 * time.Second), Current: cur}
	warm, err := Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	in.WarmUp = -1
	cold, err := Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for name, res := range map[string]*Result{"warm": warm, "cold": cold} {
		if res.Requests != 10*305 || res.Buckets != 20 || len(res.Flows) != 2 {
			t.Errorf("%s: read %d requests in %d buckets, %d flows; want the window's 3,050 in 20, 2 flows", name, res.Requests, res.Buckets, len(res.Flows))
		}
		for _, f := range res.Flows {
			if f.Series.User == "early" {
				t.Errorf("%s: the warm-up's user is a flow of the result", name)
			}
		}
		if fl, _ := res.Current.Level("flood"); fl.Predicted.Arrived != 3000 || fl.RecordedRejected != 2200 {
			t.Errorf("%s: flood level %+v", name, fl)
		}
	}
	w, _ := warm.Current.Level("flood")
	c, _ := cold.Current.Level("flood")
	t.Logf("window's rejections: warm %d, cold %d, recorded %d", w.Predicted.Rejected(), c.Predicted.Rejected(), w.RecordedRejected)
	// 3 seats × 25 a second served of 300: 2,250 refused in 10 s when the
	// queues start full; the cold start's first 100 wait in them instead.
	if w.Predicted.Rejected() < c.Predicted.Rejected()+80 {
		t.Errorf("warm-up: %d rejections, without: %d; want the warm start about 100 more", w.Predicted.Rejected(), c.Predicted.Rejected())
	}
	// The plot opens saturated: the window's first point has its seats in use.
	if w.Samples[0].Seats < 3 || w.Samples[0].Waiting == 0 {
		t.Errorf("warm plot's first point %+v, want the level full and waiting", w.Samples[0])
	}
}
