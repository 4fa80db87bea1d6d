package apfsim

import (
	"fmt"
	"math"
	"time"

	"k8s.io/apiserver/pkg/util/shufflesharding"
)

// Arrival is one request reaching a priority level.
type Arrival struct {
	// At is since the simulation's start; arrivals come in time order.
	At time.Duration
	// Level indexes the levels the Sim was made with.
	Level int
	// Hash is the flow's hash (FlowHash); unused by levels that do not
	// queue. Hand, when set, is the queues Hash deals for this level
	// (Hand): a caller replaying many requests of one flow deals once.
	Hash uint64
	Hand []int
	// Seats is the request's width (at least 1, at most its level's
	// MaxSeats); Service how long it holds them.
	Seats   int
	Service time.Duration
	// Flow indexes the caller's flows, for per-flow results.
	Flow int
	// WarmUp marks a request of the lead-in before the window: it is
	// simulated (it fills queues and seats, feeds the borrowing) but not
	// counted in any result.
	WarmUp bool
}

// Options tune a Sim.
type Options struct {
	// WaitLimit is how long a request may wait in a queue before the API
	// server answers 429 (time-out): a quarter of the request's deadline,
	// at most a minute (getRequestWaitContext,
	// k8s.io/apiserver/pkg/server/filters/priority-and-fairness.go); 15 s
	// for the default 60 s --request-timeout. Zero: 15 s.
	WaitLimit time.Duration
	// Span is the simulated time's length and Samples how many points the
	// seats-over-time plot has (at least 1); the plot covers [PlotFrom,
	// Span): the time before PlotFrom is a warm-up (Arrival.WarmUp).
	Span     time.Duration
	Samples  int
	PlotFrom time.Duration
	// Flows is how many flows Arrival.Flow indexes, as far as known (more
	// are added as arrivals name them).
	Flows int
}

// Rejection reasons, as apiserver_flowcontrol_rejected_requests_total
// labels them.
const (
	ReasonQueueFull        = "queue-full"
	ReasonConcurrencyLimit = "concurrency-limit"
	ReasonTimeOut          = "time-out"
)

// Counts are what happened to a set of requests.
type Counts struct {
	Arrived, Dispatched int64
	// Rejected by reason: queue-full, concurrency-limit, time-out.
	QueueFull, ConcurrencyLimit, TimeOut int64
	// Queued counts the requests that waited in a queue (dispatched later
	// than they arrived, or timed out); WaitSum their time there. A request
	// a level with queues dispatches at once passes through a queue
	// without waiting, and is not counted.
	Queued  int64
	WaitSum time.Duration
}

// Rejected sums the rejections.
func (c Counts) Rejected() int64 { return c.QueueFull + c.ConcurrencyLimit + c.TimeOut }

// Sample is one point of a level's plot: the most seats in use, the most
// seats waiting and the current concurrency limit within it.
type Sample struct {
	Seats, Waiting, Limit int
}

type levelStats struct {
	Counts
	samples []Sample
}

// Result is a finished simulation.
type Result struct {
	Levels []LevelResult
	Flows  []Counts
}

// LevelResult is one level's outcome.
type LevelResult struct {
	Level
	Counts
	Samples []Sample
}

// Sim is one API server's APF, fed arrivals in time order.
type Sim struct {
	sets       []*queueSet
	done       completions
	now        int64
	nextAdjust int64
	waitLimit  int64
	sampleNs   int64
	samples    int
	plotFrom   int64
	flows      []Counts
	free       []*request
	nominalSum int
	finished   bool
	// slowPath turns dispatchAtOnce off (its equivalence test); atOnce
	// counts the requests it dispatched.
	slowPath bool
	atOnce   int64
}

// New makes a simulation of levels (from Levels).
func New(levels []Level, opt Options) *Sim {
	s := &Sim{nextAdjust: borrowingAdjustmentPeriod, waitLimit: int64(opt.WaitLimit), samples: max(1, opt.Samples),
		plotFrom: max(0, int64(opt.PlotFrom))}
	if s.waitLimit <= 0 {
		s.waitLimit = int64(15 * time.Second)
	}
	s.sampleNs = max(1, (int64(opt.Span)-s.plotFrom)/int64(s.samples)+1)
	s.flows = make([]Counts, opt.Flows)
	for i := range levels {
		qs := newQueueSet(&levels[i], i)
		qs.stats.samples = make([]Sample, s.samples)
		qs.lastSample = -1
		s.sets = append(s.sets, qs)
		s.nominalSum += levels[i].NominalCL
	}
	// The simulated window starts on a running server, not a new one: its
	// limits as the last reallocation left them, taken as one after an
	// idle period (upstream starts a new level at nominal minus half its
	// lendable seats, but a server idle for ten seconds has since lent
	// every idle level's seats around, up to each one's upper limit).
	s.adjust(0)
	return s
}

// Hand is the queues a flow's hash deals in a level that queues (nil for
// one that does not), for Arrival.Hand.
func Hand(l Level, hash uint64) []int {
	if l.Queues < 1 {
		return nil
	}
	d, err := shufflesharding.NewDealer(l.Queues, l.HandSize)
	if err != nil {
		return nil
	}
	return d.DealIntoHand(hash, make([]int, l.HandSize))
}

// Arrive processes everything before a.At, then the arrival, mirroring
// queueSet.StartRequest.
func (s *Sim) Arrive(a Arrival) error {
	if s.finished {
		return fmt.Errorf("apfsim: arrival after Finish")
	}
	t := int64(a.At)
	if t < s.now {
		return fmt.Errorf("apfsim: arrival at %v is before the clock (%v)", a.At, time.Duration(s.now))
	}
	if a.Level < 0 || a.Level >= len(s.sets) || a.Flow < 0 || a.Seats < 1 {
		return fmt.Errorf("apfsim: arrival %+v out of range", a)
	}
	if a.Flow >= len(s.flows) {
		s.flows = append(s.flows, make([]Counts, a.Flow+1-len(s.flows))...)
	}
	s.advance(t)
	qs := s.sets[a.Level]
	s.expire(qs, t)
	qs.syncTime(t)
	r := s.newRequest()
	*r = request{arrival: t, service: max(0, int64(a.Service)), seats: a.Seats, flow: a.Flow, queue: -1,
		arrivalR: qs.currentR, work: float64(a.Seats) * estimatedServiceDuration, level: a.Level, warmUp: a.WarmUp}
	if f, l := s.counts(r); f != nil {
		f.Arrived++
		l.Arrived++
	}
	// Step 0 of StartRequest: a level that does not queue only applies its
	// limit (exempt levels always dispatch).
	if qs.lvl.Queues < 1 {
		if !qs.canAccommodate(r.seats) {
			s.reject(r, ReasonConcurrencyLimit)
			return nil
		}
		s.execute(qs, r, t)
		s.noteDemand(qs, t)
		return nil
	}
	// A level with no request waiting and a free seat for this one
	// dispatches it at once: steps 1 and 2 below in one (most requests of
	// a busy day take this path, and it is most of the what-if's time).
	if !s.slowPath && qs.totWaiting == 0 && qs.totSeatsInUse < qs.cl && qs.canAccommodate(r.seats) {
		s.dispatchAtOnce(qs, r, qs.idleShard(a.Hash, a.Hand), t)
		s.noteDemand(qs, t)
		return nil
	}
	// Step 1: shuffle shard, reject when at the limit and the queue is
	// full (rejectOrEnqueueToBoundLocked), else enqueue; step 2: dispatch
	// as much as possible.
	qi := qs.shuffleShard(a.Hash, a.Hand)
	if qs.totSeatsInUse >= qs.cl && qs.queues[qi].waiting.len() >= qs.lvl.QueueLengthLimit {
		s.reject(r, ReasonQueueFull)
		return nil
	}
	qs.enqueue(r, qi)
	s.dispatchAsMuchAsPossible(qs, t)
	s.noteDemand(qs, t)
	return nil
}

// Finish runs the simulation to end (at least the last arrival) and
// returns its result; requests still waiting or executing then are counted
// as they stand.
func (s *Sim) Finish(end time.Duration) Result {
	t := max(int64(end), s.now)
	s.advance(t)
	for _, qs := range s.sets {
		s.expire(qs, t)
	}
	s.finished = true
	res := Result{Flows: s.flows}
	for _, qs := range s.sets {
		res.Levels = append(res.Levels, LevelResult{Level: *qs.lvl, Counts: qs.stats.Counts, Samples: qs.stats.samples})
	}
	return res
}

func (s *Sim) newRequest() *request {
	if n := len(s.free); n > 0 {
		r := s.free[n-1]
		s.free = s.free[:n-1]
		return r
	}
	return new(request)
}

// release recycles r once nothing refers to it: neither its level's
// arrivals FIFO (where a dispatched request stays, marked done, until the
// FIFO reaches it) nor the completions.
func (s *Sim) release(r *request) {
	if !r.inFIFO && !r.executing {
		s.free = append(s.free, r)
	}
}

// count applies f to r's flow and level counts, unless r is of the
// warm-up.
func (s *Sim) count(r *request, f func(*Counts)) {
	if r.warmUp {
		return
	}
	f(&s.flows[r.flow])
	f(&s.sets[r.level].stats.Counts)
}

// counts are r's flow and level counts, nil for a request of the warm-up:
// count without a call through a closure, for what every request does.
func (s *Sim) counts(r *request) (flow, level *Counts) {
	if r.warmUp {
		return nil, nil
	}
	return &s.flows[r.flow], &s.sets[r.level].stats.Counts
}

func (s *Sim) reject(r *request, reason string) {
	r.done = true
	s.count(r, func(c *Counts) {
		switch reason {
		case ReasonQueueFull:
			c.QueueFull++
		case ReasonConcurrencyLimit:
			c.ConcurrencyLimit++
		default:
			c.TimeOut++
		}
	})
	s.release(r)
}

// execute starts r at t, holding its seats until t + service.
func (s *Sim) execute(qs *queueSet, r *request, t int64) {
	r.done, r.start, r.executing = true, t, true
	qs.totExecuting++
	qs.totSeatsInUse += r.seats
	if r.queue >= 0 {
		q := &qs.queues[r.queue]
		q.executing++
		q.seatsInUse += r.seats
		qs.seatsRequested += r.seats
		if t > r.arrival {
			s.count(r, func(c *Counts) {
				c.Queued++
				c.WaitSum += time.Duration(t - r.arrival)
			})
		}
	}
	if f, l := s.counts(r); f != nil {
		f.Dispatched++
		l.Dispatched++
	}
	s.done.push(completion{at: t + r.service, r: r})
	s.sample(qs, t)
}

// dispatchAsMuchAsPossible mirrors dispatchAsMuchAsPossibleLocked and
// dispatchLocked.
func (s *Sim) dispatchAsMuchAsPossible(qs *queueSet, t int64) {
	for qs.totWaiting != 0 && qs.totSeatsInUse < qs.cl {
		qi := qs.findDispatchQueue()
		if qi < 0 {
			return
		}
		q := &qs.queues[qi]
		if !qs.canAccommodate(q.waiting.peek().seats) {
			return
		}
		qs.robin = qi
		was := q.active()
		r := qs.unqueueHead(qi)
		s.execute(qs, r, t)
		qs.setActive(q, was)
		q.nextDispatchR += r.work
		qs.boundNextDispatch(q)
	}
}

// dispatchAtOnce is enqueue then dispatchAsMuchAsPossible for a request
// that arrives at a level where none waits and its seats are free: the
// queue's state ends as theirs would leave it (its next dispatch's virtual
// time set on activation and moved by the request's work; the waiting
// sums back where they were), without the request passing through the
// queue, the waiting list and the timeout FIFO (which would skip it as
// dispatched). TestDispatchAtOnceIsEnqueueThenDispatch checks the
// equivalence.
func (s *Sim) dispatchAtOnce(qs *queueSet, r *request, qi int, t int64) {
	s.atOnce++
	q := &qs.queues[qi]
	if !q.active() {
		q.nextDispatchR = qs.currentR
		qs.activeQueues++
	}
	r.queue = qi
	qs.robin = qi
	s.execute(qs, r, t)
	q.nextDispatchR += r.work
}

// finish mirrors finishRequestLocked: the seats come back, the queue's
// next dispatch time is corrected by how far the request's real duration
// differed from the estimate, and whatever fits is dispatched.
func (s *Sim) finish(r *request, t int64) {
	qs := s.sets[r.level]
	s.expire(qs, t)
	qs.syncTime(t)
	qs.totExecuting--
	qs.totSeatsInUse -= r.seats
	if r.queue >= 0 {
		q := &qs.queues[r.queue]
		was := q.active()
		q.executing--
		q.seatsInUse -= r.seats
		qs.seatsRequested -= r.seats
		q.nextDispatchR -= float64(r.seats) * (estimatedServiceDuration - float64(t-r.start)/1e9)
		qs.boundNextDispatch(q)
		qs.setActive(q, was)
	}
	r.executing = false
	s.release(r)
	s.dispatchAsMuchAsPossible(qs, t)
	s.noteDemand(qs, t)
	s.sample(qs, t)
}

// expire answers 429 (time-out) to the requests of qs that waited longer
// than the wait limit by t, each at its own deadline (the waiting request's
// context, queueSet's request.wait).
func (s *Sim) expire(qs *queueSet, t int64) {
	for {
		r := qs.arrivals.peek()
		if r == nil {
			return
		}
		if r.done {
			qs.arrivals.pop()
			r.inFIFO = false
			s.release(r)
			continue
		}
		deadline := r.arrival + s.waitLimit
		if deadline > t {
			return
		}
		qs.arrivals.pop()
		r.inFIFO = false
		qs.syncTime(deadline)
		q := &qs.queues[r.queue]
		was := q.active()
		// The level's oldest waiting request is its queue's oldest.
		qs.unqueueHead(r.queue)
		qs.setActive(q, was)
		qs.boundNextDispatch(q)
		s.count(r, func(c *Counts) {
			c.Queued++
			c.WaitSum += time.Duration(s.waitLimit)
		})
		s.reject(r, ReasonTimeOut)
		s.noteDemand(qs, deadline)
	}
}

// advance processes completions and borrowing adjustments up to t.
func (s *Sim) advance(t int64) {
	for {
		next := s.nextAdjust
		if c, ok := s.done.peek(); ok && c.at <= next {
			if c.at > t {
				break
			}
			s.done.pop()
			s.now = max(s.now, c.at)
			s.finish(c.r, c.at)
			continue
		}
		if next > t {
			break
		}
		s.now = next
		s.adjust(next)
		s.nextAdjust += borrowingAdjustmentPeriod
	}
	s.now = max(s.now, t)
}

// noteDemand feeds the level's seat demand (seats in use plus seats
// waiting) to its integrator, as the queueset's seatDemandIntegrator.Set.
func (s *Sim) noteDemand(qs *queueSet, t int64) {
	qs.demand.set(t, float64(qs.totSeatsInUse+qs.totSeatsWaiting))
}

// sample records qs's seats in the plot point t falls in, after a change;
// the points since the last one it recorded hold the state as the
// previous change left it (this one's too: it held until t).
func (s *Sim) sample(qs *queueSet, t int64) {
	if t < s.plotFrom {
		// The warm-up: the first point starts from the state it leaves.
		qs.standing = Sample{Seats: qs.totSeatsInUse, Waiting: qs.totSeatsWaiting, Limit: qs.cl}
		return
	}
	// Most changes fall in the point the last one did: no division then.
	i := qs.lastSample
	if i < 0 || t < qs.sampleFrom || t >= qs.sampleTo {
		i = min(int((t-s.plotFrom)/s.sampleNs), s.samples-1)
		for j := qs.lastSample + 1; j <= i; j++ {
			qs.stats.samples[j] = qs.standing
		}
		if i >= qs.lastSample {
			qs.lastSample = i
			qs.sampleFrom = s.plotFrom + int64(i)*s.sampleNs
			qs.sampleTo = qs.sampleFrom + s.sampleNs
			if i == s.samples-1 {
				qs.sampleTo = math.MaxInt64
			}
		}
	}
	qs.standing = Sample{Seats: qs.totSeatsInUse, Waiting: qs.totSeatsWaiting, Limit: qs.cl}
	p := &qs.stats.samples[i]
	p.Seats = max(p.Seats, qs.totSeatsInUse)
	p.Waiting = max(p.Waiting, qs.totSeatsWaiting)
	p.Limit = max(p.Limit, qs.cl)
}
