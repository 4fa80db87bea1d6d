//go:build integration

package ingest

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/apfflood"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// floodDelay is the admission webhook's delay: the service time of each
// request the level dispatches.
const floodDelay = 40 * time.Millisecond

// floodFor is how long the flood's arrivals last.
const floodFor = 10 * time.Second

// TestFloodRecordedTrafficMatchesAPIServerCounters: a user on a level of
// its own with few seats (1 share, lending and borrowing nothing, 4 queues
// of 2, hand size 2) floods one of the devcluster's two API servers
// open-loop at 3 times what the level can serve (nominal seats / the
// webhook's delay); the console's recorded traffic holds exactly the
// requests the client sent and the 429s it got, on that instance and none
// on the other, and its rejections are the instance's own
// apiserver_flowcontrol_rejected_requests_total increase for the level.
// The APF what-if's backtest simulates this window.
func TestFloodRecordedTrafficMatchesAPIServerCounters(t *testing.T) {
	began := time.Now()
	apiservers := testcluster.APIServers(t, 2)
	target, other := apiservers[1], apiservers[0]
	admin := testcluster.RestConfig(t, testcluster.Admin)
	store := sqliteLedger(t)
	ts := store.(ledger.TrafficStore)
	webhookUnderTest(t, store, Options{Traffic: ts}, true)

	name := fmt.Sprintf("apfflood-%d", time.Now().UnixNano()%1_000_000)
	user := name + "-flooder"
	slow := apfflood.SlowCreates(t, admin, name, floodDelay, user)
	apfflood.Setup(t, admin, name, apfflood.Limited(1, 4, 2, 2), user)

	before, beforeOther := apfflood.Metrics(t, target), apfflood.Metrics(t, other)
	seats := before.Levels[name].NominalSeats
	if seats < 1 {
		t.Fatalf("level %s on %s: %+v", name, target.Server, before.Levels[name])
	}
	lo, hi := apfflood.ConcurrencyLimit(before, apfflood.Shares(t, admin))
	rate := math.Ceil(3 * seats / floodDelay.Seconds())
	t.Logf("level %s: %v nominal seats on %s (server concurrency limit in [%d, %d]); flooding at %v/s for %v",
		name, seats, target.Server, lo, hi, rate, floodFor)

	res := apfflood.Flood(t.Context(), t, target, user, rate, floodFor, slow.Request)
	t.Logf("flood: %s", res)
	delta := apfflood.Metrics(t, target).Since(t, before).Levels[name]
	deltaOther := apfflood.Metrics(t, other).Since(t, beforeOther).Levels[name]
	t.Logf("%s counted for %s: dispatched %v, rejected %v %v, mean width %.2f seats over %v requests, mean interested watches %.2f; %s counted dispatched %v, rejected %v",
		target.Server, name, delta.Dispatched, delta.Rejected, delta.RejectedBy, delta.Seats/max(delta.SeatsCount, 1), delta.SeatsCount,
		delta.WatchCount/max(delta.WatchCountSamples, 1), other.Server, deltaOther.Dispatched, deltaOther.Rejected)
	if want := int64(rate * floodFor.Seconds()); res.Sent != want || res.Other != 0 || res.TooMany == 0 {
		t.Fatalf("the flood sent %d of %d arrivals, %d answered neither 2xx nor 429 %s, %d 429s (none: the level was not overloaded)",
			res.Sent, want, res.Other, res.FirstOther, res.TooMany)
	}
	if int64(delta.Dispatched+delta.Rejected) != res.Sent || int64(delta.Rejected) != res.TooMany {
		t.Errorf("%s dispatched %v and rejected %v at %s; the client sent %d and got %d 429s", target.Server, delta.Dispatched, delta.Rejected, name, res.Sent, res.TooMany)
	}
	if called := slow.Called(); int64(called) != res.OK {
		t.Errorf("the webhook was called for %d creates, %d were answered 2xx", called, res.OK)
	}

	instance := apfflood.Instance(target)
	rec := apfflood.WaitRecorded(t, ts, res, instance, user, slow.Request)
	t.Logf("recorded in [%s, %s) on %s: %s", res.Since().Format(time.RFC3339), res.Until().Format(time.RFC3339), instance, rec)
	if float64(rec.Rejected[instance]) != delta.Rejected {
		t.Errorf("recorded %d rejections on %s, the API server counted %v", rec.Rejected[instance], instance, delta.Rejected)
	}
	if o := apfflood.Instance(other); rec.Requests[o] != 0 || deltaOther.Dispatched != 0 || deltaOther.Rejected != 0 {
		t.Errorf("the other instance %s: recorded %d requests, counted %v dispatched and %v rejected", o, rec.Requests[o], deltaOther.Dispatched, deltaOther.Rejected)
	}
	if len(rec.Requests) != 1 {
		t.Errorf("recorded instances %v, want only %s", rec.Requests, instance)
	}
	t.Logf("test took %v", time.Since(began).Round(time.Millisecond))
}
