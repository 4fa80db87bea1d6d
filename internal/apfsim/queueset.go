package apfsim

import (
	"k8s.io/apiserver/pkg/util/shufflesharding"
)

// request is one arrival while the simulation holds it.
type request struct {
	arrival, service int64 // ns of simulated time
	seats            int
	flow             int
	queue            int // -1: dispatched without a queue
	// arrivalR is the virtual time at arrival; work is the seat-seconds the
	// queueset charges it in virtual time (completeWorkEstimate: initial
	// seats × estimatedServiceDuration, no final seats in this model).
	arrivalR, work float64
	start          int64
	done           bool // dispatched or rejected: the timeout FIFO skips it
	// inFIFO and executing: where the simulation still refers to it (it is
	// recycled when neither holds).
	inFIFO, executing bool
	level             int
	warmUp            bool // Arrival.WarmUp: simulated, not counted
}

// fifo is a queue of requests in arrival order.
type fifo struct {
	items []*request
	head  int
}

func (f *fifo) len() int        { return len(f.items) - f.head }
func (f *fifo) push(r *request) { f.items = append(f.items, r) }
func (f *fifo) peek() *request {
	if f.head == len(f.items) {
		return nil
	}
	return f.items[f.head]
}

func (f *fifo) pop() *request {
	r := f.items[f.head]
	f.items[f.head] = nil
	f.head++
	if f.head == len(f.items) {
		f.items, f.head = f.items[:0], 0
	} else if f.head >= 1024 && f.head*2 >= len(f.items) {
		n := copy(f.items, f.items[f.head:])
		clear(f.items[n:])
		f.items, f.head = f.items[:n], 0
	}
	return r
}

// queue mirrors queueset's queue: its waiting requests, their sums, the
// seats its executing requests hold and its next dispatch's virtual time.
type queue struct {
	waiting       fifo
	waitWork      float64 // requestsWaiting.QueueSum().TotalWorkSum
	waitMaxSeats  int     // requestsWaiting.QueueSum().MaxSeatsSum
	executing     int
	seatsInUse    int
	nextDispatchR float64
	waitPos       int // index in queueSet.waitingQueues, -1 when none waits
}

func (q *queue) active() bool { return q.waiting.len() > 0 || q.executing > 0 }

// queueSet mirrors fairqueuing/queueset/queueset.go's queueSet for one
// priority level, single-threaded: the caller advances the clock.
type queueSet struct {
	lvl    *Level
	index  int
	cl     int // the current concurrency limit (dCfg.ConcurrencyLimit)
	queues []queue
	dealer *shufflesharding.Dealer
	hand   []int

	enqueues, robin int
	currentR        float64
	lastT           int64

	// Kept as upstream's getVirtualTimeRatioLocked would sum them over the
	// queues, incrementally: Σ (seatsInUse + waiting max seats), and how
	// many queues are active.
	seatsRequested, activeQueues int

	totSeatsInUse, totSeatsWaiting, totExecuting, totWaiting int
	// waitingQueues lists the queues with a waiting request: dispatch looks
	// at those only (upstream scans every queue; the others cannot win).
	waitingQueues []int
	// arrivals holds the waiting requests in arrival order, for timeouts:
	// the oldest waiting request of the level is its queue's head.
	arrivals fifo

	demand     integrator
	seatDemand seatDemandStats
	stats      levelStats
	lastSample int
	// sampleFrom and sampleTo bound lastSample's point in time.
	sampleFrom, sampleTo int64
	standing             Sample // the state as the last change left it
}

func newQueueSet(l *Level, index int) *queueSet {
	qs := &queueSet{lvl: l, index: index, robin: -1}
	// The initial current limit: nominal minus half the lendable
	// (finishQueueSetReconfigsLocked, initialCL).
	qs.cl = l.NominalCL - (l.NominalCL-l.MinCL)/2
	if l.Queues > 0 {
		qs.queues = make([]queue, l.Queues)
		for i := range qs.queues {
			qs.queues[i].waitPos = -1
		}
		// Levels validated the shape; NewDealer cannot fail on it.
		qs.dealer, _ = shufflesharding.NewDealer(l.Queues, l.HandSize)
		qs.hand = make([]int, l.HandSize)
	}
	return qs
}

// syncTime mirrors syncTimeLocked: virtual time advances at
// min(seats requested, limit) / active queues since the last change.
func (qs *queueSet) syncTime(t int64) {
	if dt := t - qs.lastT; dt > 0 && qs.activeQueues > 0 {
		ratio := float64(min(qs.seatsRequested, qs.cl)) / float64(qs.activeQueues)
		qs.currentR += ratio * float64(dt) / 1e9
	}
	qs.lastT = t
}

// canAccommodate mirrors canAccommodateSeatsLocked.
func (qs *queueSet) canAccommodate(seats int) bool {
	switch {
	case qs.lvl.Exempt:
		return true
	case seats > qs.cl:
		return qs.totExecuting == 0
	}
	return qs.totSeatsInUse+seats <= qs.cl
}

// shuffleShard mirrors shuffleShardLocked: deal a hand (or take the one
// dealt before for the same hash), start at an offset that turns with every
// enqueue, take the queue with the least waiting work.
func (qs *queueSet) shuffleShard(hash uint64, dealt []int) int {
	hand, offset := qs.deal(hash, dealt)
	best, bestWork := -1, 0.0
	for i := range hand {
		qi := hand[(offset+i)%len(hand)]
		if w := qs.queues[qi].waitWork; best < 0 || w < bestWork {
			best, bestWork = qi, w
		}
	}
	return best
}

// idleShard is shuffleShard when no queue of the level has a waiting
// request: every queue's waiting work is zero, so the hand's first queue
// from the offset wins (the scan replaces only on less work).
func (qs *queueSet) idleShard(hash uint64, dealt []int) int {
	hand, offset := qs.deal(hash, dealt)
	return hand[offset]
}

// deal is the hand the flow's hash deals (or the one dealt before for the
// same hash) and the offset the scan starts at, which turns with every
// enqueue.
func (qs *queueSet) deal(hash uint64, dealt []int) (hand []int, offset int) {
	hand = dealt
	if len(hand) != qs.lvl.HandSize {
		hand = qs.dealer.DealIntoHand(hash, qs.hand)
	}
	offset = qs.enqueues % len(hand)
	qs.enqueues++
	return hand, offset
}

// setActive keeps activeQueues after q's counts changed from wasActive.
func (qs *queueSet) setActive(q *queue, wasActive bool) {
	switch now := q.active(); {
	case now && !wasActive:
		qs.activeQueues++
	case !now && wasActive:
		qs.activeQueues--
	}
}

// enqueue mirrors enqueueToBoundLocked.
func (qs *queueSet) enqueue(r *request, qi int) {
	q := &qs.queues[qi]
	was := q.active()
	if !was {
		q.nextDispatchR = qs.currentR
	}
	r.queue = qi
	q.waiting.push(r)
	q.waitWork += r.work
	q.waitMaxSeats += r.seats
	qs.seatsRequested += r.seats
	qs.totWaiting++
	qs.totSeatsWaiting += r.seats
	if q.waitPos < 0 {
		q.waitPos = len(qs.waitingQueues)
		qs.waitingQueues = append(qs.waitingQueues, qi)
	}
	qs.arrivals.push(r)
	r.inFIFO = true
	qs.setActive(q, was)
}

// unqueueHead takes q's oldest waiting request out of it.
func (qs *queueSet) unqueueHead(qi int) *request {
	q := &qs.queues[qi]
	r := q.waiting.pop()
	q.waitWork -= r.work
	if q.waiting.len() == 0 {
		q.waitWork = 0 // no drift of float sums across millions of requests
		last := qs.waitingQueues[len(qs.waitingQueues)-1]
		qs.waitingQueues[q.waitPos] = last
		qs.queues[last].waitPos = q.waitPos
		qs.waitingQueues = qs.waitingQueues[:len(qs.waitingQueues)-1]
		q.waitPos = -1
	}
	q.waitMaxSeats -= r.seats
	qs.seatsRequested -= r.seats
	qs.totWaiting--
	qs.totSeatsWaiting -= r.seats
	return r
}

// findDispatchQueue mirrors findDispatchQueueToBoundLocked: in round-robin
// order from the one after the last chosen, the first queue whose oldest
// request's virtual finish is least. Only queues with a waiting request can
// be chosen, so only those are looked at; the round-robin distance breaks
// ties as upstream's scan order does.
func (qs *queueSet) findDispatchQueue() int {
	nq := len(qs.queues)
	best, bestDist := -1, 0
	var bestFinish float64
	for _, qi := range qs.waitingQueues {
		q := &qs.queues[qi]
		finish := q.nextDispatchR + q.waiting.peek().work
		dist := (qi - qs.robin - 1 + 2*nq) % nq
		if best < 0 || finish < bestFinish || (finish == bestFinish && dist < bestDist) {
			best, bestDist, bestFinish = qi, dist, finish
		}
	}
	return best
}

// boundNextDispatch mirrors boundNextDispatchLocked.
func (qs *queueSet) boundNextDispatch(q *queue) {
	if head := q.waiting.peek(); head != nil && q.nextDispatchR < head.arrivalR {
		q.nextDispatchR = head.arrivalR
	}
}
