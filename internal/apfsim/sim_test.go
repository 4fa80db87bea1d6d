package apfsim

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// one runs arrivals through a single level and finishes long after.
func one(t *testing.T, l Level, flows int, arrivals []Arrival) Result {
	t.Helper()
	s := New([]Level{l}, Options{Span: time.Hour, Samples: 10, Flows: flows})
	for _, a := range arrivals {
		if err := s.Arrive(a); err != nil {
			t.Fatal(err)
		}
	}
	return s.Finish(time.Hour)
}

func TestRejectModeAppliesTheLimitOnly(t *testing.T) {
	l := Level{Name: "r", NominalCL: 2, MinCL: 2, MaxCL: 2, MaxSeats: 10}
	res := one(t, l, 1, []Arrival{
		{At: 0, Seats: 1, Service: time.Second}, {At: ms(100), Seats: 1, Service: time.Second},
		{At: ms(200), Seats: 1, Service: time.Second}, {At: ms(1100), Seats: 1, Service: time.Second},
	})
	c := res.Levels[0].Counts
	if c.Dispatched != 3 || c.ConcurrencyLimit != 1 || c.Queued != 0 {
		t.Fatalf("counts %+v: want 3 dispatched and the third rejected for the concurrency limit", c)
	}
}

func TestQueueFullWhenAtTheLimitAndTheQueueIsFull(t *testing.T) {
	l := Level{Name: "q", NominalCL: 1, MinCL: 1, MaxCL: 1, Queues: 1, HandSize: 1, QueueLengthLimit: 1, MaxSeats: 1}
	res := one(t, l, 1, []Arrival{
		{At: 0, Seats: 1, Service: time.Second}, {At: ms(100), Seats: 1, Service: time.Second},
		{At: ms(200), Seats: 1, Service: time.Second},
	})
	c := res.Levels[0].Counts
	// The second waits from 0.1 s to 1 s; the third finds the queue full.
	if c.Dispatched != 2 || c.QueueFull != 1 || c.Queued != 1 || c.WaitSum != ms(900) {
		t.Fatalf("counts %+v", c)
	}
}

func TestTimeOutAfterTheWaitLimit(t *testing.T) {
	l := Level{Name: "q", NominalCL: 1, MinCL: 1, MaxCL: 1, Queues: 1, HandSize: 1, QueueLengthLimit: 50, MaxSeats: 1}
	var as []Arrival
	for i := range 4 {
		as = append(as, Arrival{At: ms(i), Seats: 1, Service: 10 * time.Second})
	}
	res := one(t, l, 1, as)
	// 0 runs 0–10 s, 1 runs 10–20 s; 2 and 3 would start at 20 s, past the
	// 15 s wait limit.
	if c := res.Levels[0].Counts; c.Dispatched != 2 || c.TimeOut != 2 {
		t.Fatalf("counts %+v", c)
	}
}

// TestFairQueuingProtectsTheLightFlow: a flow sending ten times its share
// into one seat is rejected, a light flow on another queue is not.
func TestFairQueuingProtectsTheLightFlow(t *testing.T) {
	l := Level{Name: "f", NominalCL: 1, MinCL: 1, MaxCL: 1, Queues: 64, HandSize: 1, QueueLengthLimit: 2, MaxSeats: 1}
	heavy, light := FlowHash("fs", "heavy"), FlowHash("fs", "light")
	var as []Arrival
	for i := range 200 { // 20 s: heavy at 20/s, light at 2/s, 100 ms each
		at := ms(i * 50)
		as = append(as, Arrival{At: at, Hash: heavy, Seats: 1, Service: ms(100), Flow: 0})
		if i%10 == 0 {
			as = append(as, Arrival{At: at + ms(1), Hash: light, Seats: 1, Service: ms(100), Flow: 1})
		}
	}
	res := one(t, l, 2, as)
	if h, lt := res.Flows[0], res.Flows[1]; h.Rejected() == 0 || lt.Rejected() != 0 || lt.Dispatched != 20 {
		t.Fatalf("heavy %+v, light %+v", h, lt)
	}
}

// TestBorrowingLendsAnIdleLevelsSeats: a flooded level borrows what an idle
// one lends (from the start: the window begins on a server that has been
// running), and gives it back at the first reallocation after the lender
// gets busy itself.
func TestBorrowingLendsAnIdleLevelsSeats(t *testing.T) {
	plcs := []*flowcontrolv1.PriorityLevelConfiguration{
		limited("lender", 10, 50, nil, 8),
		limited("busy", 10, 0, ptr.To[int32](100), 8),
	}
	levels, err := Levels(plcs, 20)
	if err != nil {
		t.Fatal(err)
	}
	if levels[1].NominalCL != 10 || levels[1].MaxCL != 20 || levels[0].MinCL != 5 {
		t.Fatalf("levels %+v", levels)
	}
	s := New(levels, Options{Span: 40 * time.Second, Samples: 40, Flows: 1})
	for i := range 4000 { // 100/s of 1 s each into busy, from 15 s into the lender too
		at := ms(i * 10)
		if err := s.Arrive(Arrival{At: at, Level: 1, Hash: uint64(i), Seats: 1, Service: time.Second}); err != nil {
			t.Fatal(err)
		}
		if at >= 15*time.Second {
			if err := s.Arrive(Arrival{At: at, Level: 0, Hash: uint64(i), Seats: 1, Service: time.Second}); err != nil {
				t.Fatal(err)
			}
		}
	}
	res := s.Finish(40 * time.Second)
	busy, lender := res.Levels[1].Samples, res.Levels[0].Samples
	// From the start, a share of the idle lender's seats (the allocation
	// is proportional to the levels' targets, 5 and 10); from the first
	// reallocation all it lends (5); once it is busy, nothing.
	if busy[5].Limit != 13 || busy[5].Seats != 13 || busy[15].Limit != 15 || busy[25].Limit != 10 || lender[25].Limit != 10 ||
		lender[12].Seats != 0 {
		t.Fatalf("busy level's plot %v, lender's %v", busy, lender)
	}
}

// TestEveryArrivalIsAccountedFor: random traffic over random levels; when
// the simulation has run out, every arrival was dispatched or rejected,
// per flow and per level, and no plot point shows more seats in use than
// the level could ever have (a limit lowered by borrowing does not stop
// what runs; a request wider than the limit runs alone).
func TestEveryArrivalIsAccountedFor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	levels := []Level{
		{Name: "exempt", Exempt: true, MaxCL: 600, MaxSeats: 10},
		{Name: "reject", NominalCL: 3, MinCL: 3, MaxCL: 3, MaxSeats: 10},
		{Name: "queues", NominalCL: 5, MinCL: 2, MaxCL: 8, Queues: 16, HandSize: 4, QueueLengthLimit: 3, MaxSeats: 2},
	}
	s := New(levels, Options{Span: time.Minute, Samples: 60, Flows: 7})
	var at time.Duration
	for range 20000 {
		at += time.Duration(rng.IntN(6)) * time.Millisecond
		l := rng.IntN(3)
		if err := s.Arrive(Arrival{At: at, Level: l, Hash: rng.Uint64() % 9, Seats: 1 + rng.IntN(levels[l].MaxSeats),
			Service: time.Duration(rng.IntN(200)) * time.Millisecond, Flow: rng.IntN(7)}); err != nil {
			t.Fatal(err)
		}
	}
	res := s.Finish(at + time.Hour)
	var arrived int64
	for i, f := range res.Flows {
		if f.Arrived != f.Dispatched+f.Rejected() {
			t.Errorf("flow %d: %+v", i, f)
		}
		arrived += f.Arrived
	}
	if arrived != 20000 {
		t.Errorf("%d arrivals counted", arrived)
	}
	for _, l := range res.Levels {
		if l.Arrived != l.Dispatched+l.Rejected() || l.Arrived == 0 {
			t.Errorf("level %s: %+v", l.Name, l.Counts)
		}
		for i, p := range l.Samples {
			if !l.Exempt && p.Seats > max(l.MaxCL, l.MaxSeats) {
				t.Errorf("level %s point %d: %d seats in use, limit %d", l.Name, i, p.Seats, p.Limit)
			}
		}
	}
	if res.Levels[2].QueueFull == 0 || res.Levels[1].ConcurrencyLimit == 0 {
		t.Errorf("the random traffic never filled a level: %+v", res.Levels)
	}
}

func TestArrivalsOutOfOrderAreRefused(t *testing.T) {
	s := New([]Level{{Name: "e", Exempt: true}}, Options{Flows: 1})
	if err := s.Arrive(Arrival{At: time.Second, Seats: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Arrive(Arrival{At: 0, Seats: 1}); err == nil {
		t.Fatal("an arrival before the clock was accepted")
	}
}

func limited(name string, shares, lendable int32, borrowing *int32, queues int32) *flowcontrolv1.PriorityLevelConfiguration {
	lr := flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}
	if queues > 0 {
		lr = flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
			Queuing: &flowcontrolv1.QueuingConfiguration{Queues: queues, HandSize: 2, QueueLengthLimit: 10}}
	}
	return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: &shares,
				LendablePercent: &lendable, BorrowingLimitPercent: borrowing, LimitResponse: lr}}}
}

// TestDispatchAtOnceIsEnqueueThenDispatch: traffic that swings between an
// idle level and a flooded one (queues full, time-outs, borrowing), with
// wide and narrow requests, ends exactly the same, every count and plot
// point, whether a request arriving at a level where none waits takes the
// short path (dispatchAtOnce) or goes through its queue.
func TestDispatchAtOnceIsEnqueueThenDispatch(t *testing.T) {
	plcs := []*flowcontrolv1.PriorityLevelConfiguration{
		limited("lender", 10, 50, nil, 8),
		limited("busy", 10, 20, ptr.To[int32](100), 16),
		limited("reject", 5, 0, nil, 0),
	}
	levels, err := Levels(plcs, 40)
	if err != nil {
		t.Fatal(err)
	}
	run := func(slow bool) (Result, int64) {
		rng := rand.New(rand.NewPCG(46, 7))
		s := New(levels, Options{Span: 3 * time.Minute, Samples: 120, PlotFrom: 10 * time.Second, Flows: 12,
			WaitLimit: 40 * time.Millisecond})
		s.slowPath = slow
		var at time.Duration
		for i := range 100000 {
			// Bursts: 1 s of every 10 s, the gaps shrink tenfold.
			gap := 40
			if at%(10*time.Second) < time.Second {
				gap = 4
			}
			at += time.Duration(rng.IntN(gap)) * 100 * time.Microsecond
			l := rng.IntN(3)
			flow := rng.IntN(12)
			a := Arrival{At: at, Level: l, Hash: uint64(flow), Seats: 1 + rng.IntN(3), Flow: flow,
				Service: time.Duration(1+rng.IntN(10)) * time.Millisecond, WarmUp: at < 10*time.Second}
			if i%3 == 0 {
				a.Hand = Hand(levels[l], a.Hash)
			}
			if err := s.Arrive(a); err != nil {
				t.Fatal(err)
			}
		}
		return s.Finish(at + time.Minute), s.atOnce
	}
	slow, none := run(true)
	fast, atOnce := run(false)
	if none != 0 || atOnce < 20000 {
		t.Fatalf("the short path dispatched %d requests with it off and %d with it on", none, atOnce)
	}
	var queued, full, timedOut int64
	for _, l := range slow.Levels {
		queued += l.Queued
		full += l.QueueFull
		timedOut += l.TimeOut
	}
	if queued == 0 || full == 0 || timedOut == 0 {
		t.Fatalf("the traffic never queued (%d), filled a queue (%d) or timed out (%d): it proves little", queued, full, timedOut)
	}
	if a, b := fmt.Sprintf("%+v", slow), fmt.Sprintf("%+v", fast); a != b {
		t.Errorf("the short path changed the outcome:\nslow %s\nfast %s", a, b)
	}
	t.Logf("%d requests dispatched at once; %d queued, %d found their queue full, %d timed out", atOnce, queued, full, timedOut)
}
