//go:build integration

package ingest

import (
	"fmt"
	"math"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/clusterdesk/clusterdesk/internal/apfflood"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/whatif"
)

// calmFor is each flood's calm lead-in.
const calmFor = 4 * time.Second

// floodAfterCalm sends the calm lead-in, then the flood, and returns the
// window of both. The lead-in runs at a sixth of what the level can serve:
// at a third, a loaded CI machine (each request served slower, the sender
// late by up to 338 ms and then sending its backlog at once) filled the
// level's 3 seats and 2-long queues, and one of the lead-in's 36 requests
// was refused (stop 60's CI). The model takes the flow's service time from
// its latest second without refusals, queue waits under 500 ms included
// (whatif's serviceOf): a calmer lead-in also gives it a truer one.
func floodAfterCalm(t *testing.T, target testcluster.APIServer, user string, seats, rate float64, d time.Duration, req apfflood.Request) (calm, flood apfflood.Result) {
	t.Helper()
	calm = apfflood.Flood(t.Context(), t, target, user, math.Max(1, math.Floor(seats/whatIfDelay.Seconds()/6)), calmFor, req)
	if calm.TooMany != 0 {
		t.Fatalf("the calm lead-in was refused: %s", calm)
	}
	return calm, apfflood.Flood(t.Context(), t, target, user, rate, d, req)
}

// both is a lead-in and its flood as one: what the recorded traffic of
// their window holds.
func both(calm, flood apfflood.Result) apfflood.Result {
	return apfflood.Result{Start: calm.Start, End: flood.End, Sent: calm.Sent + flood.Sent, TooMany: calm.TooMany + flood.TooMany}
}

// ownShares are the draft's own level's shares, twice the live level's.
const ownShares = 2

// agreement is issue 46's bound: a prediction within ±25% of what the API
// server counted.
const agreement = 0.25

// whatIfDelay is the service time of the what-if's floods: longer than the
// recording test's, so that three times a level's capacity is a hundred or
// two requests a second (3 and 5 seats; the API servers' CPU is the suite's).
//
// Each flood follows a calm lead-in (calmFor at a sixth of the level's
// capacity), as a client's storm follows its normal traffic: the model
// takes a flooding flow's service time from its calm seconds, and from
// the fastest served request of its saturated seconds only without any.
// Without the lead-in that fallback, which includes the shortest queue
// wait, put predictions 19–44% high at 300 ms (few requests a second to
// take the fastest of).
const whatIfDelay = 80 * time.Millisecond

// TestWhatIfPredictsTheAPIServersRejectionsBeforeAndAfterADraft proves the
// what-if on the past, twice, against the devcluster's own counters:
//
//  1. A user floods a level of 3 seats on one API server (open loop, at
//     three times what it can serve). The what-if over that recorded
//     window, with the configuration that was live, predicts the level's
//     rejections on that instance within ±25% of the instance's
//     apiserver_flowcontrol_rejected_requests_total increase (the
//     backtest).
//  2. Over the same window, a draft that moves the flooder to a level of
//     its own with 2 shares predicts its rejections move there (none left
//     in the old level). The draft is then applied for real, the same
//     flood repeated: the new level's rejections counted by the API server
//     agree with the prediction made on the first flood within ±25%.
func TestWhatIfPredictsTheAPIServersRejectionsBeforeAndAfterADraft(t *testing.T) {
	apiservers := testcluster.APIServers(t, 2)
	target := apiservers[1]
	instance := apfflood.Instance(target)
	admin := testcluster.RestConfig(t, testcluster.Admin)
	store := sqliteLedger(t)
	ts := store.(ledger.TrafficStore)
	webhookUnderTest(t, store, Options{Traffic: ts}, true)

	name := fmt.Sprintf("whatif-%d", time.Now().UnixNano()%1_000_000)
	user, own := name+"-flooder", name+"-own"
	slow := apfflood.SlowCreates(t, admin, name, whatIfDelay, user)
	apfflood.Setup(t, admin, name, apfflood.Limited(1, 4, 2, 2), user)

	// 1. The past: the flood under the live configuration.
	before := apfflood.Metrics(t, target)
	seats := before.Levels[name].NominalSeats
	shares := apfflood.Shares(t, admin)
	serverCL, hi := apfflood.ConcurrencyLimit(before, shares)
	// Both floods at three times what the larger of the two levels can
	// serve (five times the live level's): the draft's level (2 shares) has
	// more seats than the live one, and at the live level's three times it
	// was flooded at only 1.8 times its own, where
	// the rejections are the small difference of two large numbers: a
	// second flood on a busier machine (each request served 20% slower)
	// then moved the API server's count 27% from the prediction (CI2).
	ownSeats := apfflood.NominalSeats(serverCL, ownShares, apfflood.SharesSum(shares)+ownShares)
	rate := math.Ceil(3 * math.Max(seats, float64(ownSeats)) / whatIfDelay.Seconds())
	calm, first := floodAfterCalm(t, target, user, seats, rate, floodFor, slow.Request)
	counted := apfflood.Metrics(t, target).Since(t, before).Levels[name]
	apfflood.WaitRecorded(t, ts, both(calm, first), instance, user, slow.Request)
	t.Logf("first flood at %v/s on %s (%v seats, server limit in [%d, %d]): %s; the API server rejected %v",
		rate, instance, seats, serverCL, hi, first, counted.Rejected)

	fc := testcluster.NewFlowcontrol(t, admin)
	cur := liveConfig(t, fc)
	var moved *flowcontrolv1.FlowSchema
	for _, f := range cur.FlowSchemas {
		if f.Name == name {
			moved = f.DeepCopy()
		}
	}
	if moved == nil {
		t.Fatalf("FlowSchema %s not listed", name)
	}
	moved.Spec.PriorityLevelConfiguration.Name = own
	ownLevel := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: own}, Spec: apfflood.Limited(ownShares, 4, 2, 2)}
	draft := whatif.Overlay(cur, whatif.Config{FlowSchemas: []*flowcontrolv1.FlowSchema{moved},
		Levels: []*flowcontrolv1.PriorityLevelConfiguration{ownLevel}})
	packRecorded(t, ts)
	res, err := whatif.Run(t.Context(), whatif.Input{Traffic: ts, Since: calm.Since(), Until: first.Until(), Current: cur, Draft: &draft,
		ServerCL: func(string) int { return serverCL }})
	if err != nil {
		t.Fatal(err)
	}
	backtest := onInstance(t, res.Current, name, instance)
	t.Logf("backtest over [%s, %s): predicted %+v, recorded %d rejected of %d; the API server counted %v rejected (%v)",
		calm.Since().Format(time.TimeOnly), first.Until().Format(time.TimeOnly), backtest.Predicted, backtest.RecordedRejected,
		backtest.RecordedRequests, counted.Rejected, counted.RejectedBy)
	agrees(t, "the backtest of the live configuration", backtest.Predicted.Rejected(), counted.Rejected)
	if old, ok := res.Draft.Level(name); !ok || old.Predicted.Arrived != 0 {
		t.Errorf("the draft still sends requests to %s: %+v", name, old.Predicted)
	}
	predicted := onInstance(t, *res.Draft, own, instance)
	t.Logf("the draft predicts on %s: %+v (%d nominal seats)", own, predicted.Predicted, predicted.NominalCL)
	// At least the flood: the flooder's GET /version that checks the
	// FlowSchema took effect may fall in the window too.
	if predicted.Predicted.Arrived < calm.Sent+first.Sent || predicted.Predicted.Rejected() >= backtest.Predicted.Rejected() {
		t.Errorf("the draft's level gets %+v of the %d requests; the live level was predicted %d rejections", predicted.Predicted,
			calm.Sent+first.Sent, backtest.Predicted.Rejected())
	}

	// 2. The draft applied for real, the same flood again.
	if err := fc.CreatePriorityLevel(t.Context(), ownLevel); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fc.DeletePriorityLevel(t.Context(), own) })
	apfflood.Move(t, admin, name, own, user)
	before = apfflood.Metrics(t, target)
	_, second := floodAfterCalm(t, target, user, seats, rate, floodFor, slow.Request)
	countedOwn := apfflood.Metrics(t, target).Since(t, before).Levels[own]
	t.Logf("second flood, draft applied: %s; the API server rejected %v at %s (%v nominal seats)", second, countedOwn.Rejected, own,
		countedOwn.NominalSeats)
	agrees(t, "the draft's prediction, applied for real", predicted.Predicted.Rejected(), countedOwn.Rejected)
}

// liveConfig is the cluster's FlowSchemas and priority levels.
// packRecorded packs the recorded traffic's whole minutes as the console
// does behind the ingest: the what-if reads them packed, and the minute in
// progress unpacked beside them.
func packRecorded(t *testing.T, ts ledger.TrafficStore) {
	t.Helper()
	n, err := ts.PackTraffic(t.Context(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("packed %d second buckets before the run", n)
}

func liveConfig(t *testing.T, fc *testcluster.Flowcontrol) whatif.Config {
	t.Helper()
	var c whatif.Config
	var err error
	if c.FlowSchemas, err = fc.FlowSchemas(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c.Levels, err = fc.PriorityLevels(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// onInstance is level name's part on instance.
func onInstance(t *testing.T, o whatif.Outcome, name, instance string) whatif.InstanceLevel {
	t.Helper()
	l, ok := o.Level(name)
	if !ok {
		t.Fatalf("no level %s in %+v", name, o.Levels)
	}
	for _, il := range l.Instances {
		if il.Instance == instance {
			return il
		}
	}
	t.Fatalf("level %s has no part on %s: %+v", name, instance, l.Instances)
	return whatif.InstanceLevel{}
}

func agrees(t *testing.T, what string, predicted int64, counted float64) {
	t.Helper()
	off := math.Abs(float64(predicted)-counted) / counted
	t.Logf("%s: predicted %d rejections, the API server counted %v: %.1f%% off", what, predicted, counted, 100*off)
	if counted == 0 || off > agreement {
		t.Errorf("%s: predicted %d rejections, the API server counted %v (more than %.0f%% apart)", what, predicted, counted, 100*agreement)
	}
}

// TestWhatIfBacktestOfABorrowingLevel: the same flood on a level that may
// borrow twice its nominal seats from the levels that lend (the suggested
// ones lend 50% and more), for long enough that the API server reallocates
// its limits (every 10 s) twice: the backtest follows the borrowing and
// predicts the rejections within ±25% of the API server's count.
func TestWhatIfBacktestOfABorrowingLevel(t *testing.T) {
	apiservers := testcluster.APIServers(t, 2)
	target := apiservers[1]
	instance := apfflood.Instance(target)
	admin := testcluster.RestConfig(t, testcluster.Admin)
	store := sqliteLedger(t)
	ts := store.(ledger.TrafficStore)
	webhookUnderTest(t, store, Options{Traffic: ts}, true)

	name := fmt.Sprintf("whatif-borrow-%d", time.Now().UnixNano()%1_000_000)
	user := name + "-flooder"
	slow := apfflood.SlowCreates(t, admin, name, whatIfDelay, user)
	spec := apfflood.Limited(1, 4, 2, 2)
	spec.Limited.BorrowingLimitPercent = ptr.To[int32](200)
	apfflood.Setup(t, admin, name, spec, user)

	before := apfflood.Metrics(t, target)
	seats := before.Levels[name].NominalSeats
	serverCL, _ := apfflood.ConcurrencyLimit(before, apfflood.Shares(t, admin))
	// Twice the most it can borrow up to: rejected whatever it gets, and
	// its rejections without borrowing would be about twice as many (a
	// model that did not borrow fails here: seen 26% off at 3 times).
	rate := math.Ceil(2 * 3 * seats / whatIfDelay.Seconds())
	calm, flood := floodAfterCalm(t, target, user, seats, rate, 20*time.Second, slow.Request)
	after := apfflood.Metrics(t, target)
	counted := after.Since(t, before).Levels[name]
	apfflood.WaitRecorded(t, ts, both(calm, flood), instance, user, slow.Request)
	t.Logf("flood at %v/s on %s (%v nominal seats, up to %v): %s; the API server rejected %v, its limit now %v",
		rate, instance, seats, after.Levels[name].UpperSeats, flood, counted.Rejected, after.Levels[name])

	fc := testcluster.NewFlowcontrol(t, admin)
	cur := liveConfig(t, fc)
	packRecorded(t, ts)
	res, err := whatif.Run(t.Context(), whatif.Input{Traffic: ts, Since: calm.Since(), Until: flood.Until(), Current: cur,
		ServerCL: func(string) int { return serverCL }, Samples: 30})
	if err != nil {
		t.Fatal(err)
	}
	backtest := onInstance(t, res.Current, name, instance)
	l, _ := res.Current.Level(name)
	var limits []int
	for _, s := range l.Samples {
		limits = append(limits, s.Limit)
	}
	t.Logf("backtest: predicted %+v; the model's limit over the window %v", backtest.Predicted, limits)
	agrees(t, "the backtest of a borrowing level", backtest.Predicted.Rejected(), counted.Rejected)
}
