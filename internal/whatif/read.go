package whatif

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// arrival is one request as the reader hands it to the workers.
type arrival struct {
	at, service int64 // ns since the warm-up's start
	info        *seriesInfo
	instance    int  // the simulated server: info's, or one of those it is dealt to
	warmUp      bool // of a bucket before the window: simulated, not counted
}

// batch is arrivals shared by every worker; the last to finish with it
// gives it back.
type batch struct {
	items []arrival
	refs  atomic.Int32
	// instances is the runner's instance names as they stood when the
	// batch was sent (the reader appends to its own; entries already there
	// never change).
	instances []string
}

const batchSize = 4096

// batchesInFlight bounds the arrivals read ahead of the slowest worker
// (about 160 KiB a batch): enough that the reader and the workers, three
// goroutines on two cores, rarely wait for one another.
const batchesInFlight = 32

// runner reads the window and spreads each bucket's requests over it.
type runner struct {
	in       Input
	plans    []*plan
	seriesOf map[int64]*seriesInfo
	flowOf   map[string]int
	flows    []*ledger.TrafficSeries
	// flowSeries is a series of each flow: its classification stands for
	// the flow's.
	flowSeries []*seriesInfo
	instanceOf map[string]int
	instances  []string
	// inWindow marks the instances and flows with traffic in the window:
	// those the warm-up alone saw are left out of the result.
	instanceInWindow, flowInWindow []bool
	// recorded[flow] is what the API server did to the flow, per instance.
	recorded map[[2]int]*recordedCounts
	free     chan *batch

	buckets, requests, skipped int64
	// dealt counts the requests of no named instance dealt round robin to
	// Input.UnnamedSplit simulated servers.
	dealt int
}

type recordedCounts struct{ requests, rejected int64 }

// spreader hands out one bucket's requests evenly over its width: the
// traffic keeps counts per second, not arrival times.
type spreader struct {
	next, start int64
	step        float64
	i, n        int64
	service     int64
	info        *seriesInfo
	warmUp      bool
}

func (sp *spreader) at() int64 { return sp.start + int64((float64(sp.i)+0.5)*sp.step) }

// read scans the window and feeds the workers, in time order.
func (r *runner) read(ctx context.Context, workers []*worker) error {
	r.recorded = map[[2]int]*recordedCounts{}
	r.free = make(chan *batch, batchesInFlight)
	for range batchesInFlight {
		r.free <- &batch{items: make([]arrival, 0, batchSize)}
	}
	// The simulation's clock starts at the warm-up's start.
	since := r.in.Since.Add(-r.in.warmUp())
	span := float64(r.in.Until.Sub(since))
	// heap orders the spreaders by their next arrival, kept in the entry
	// so that a sift compares without following a pointer (one sift per
	// request: a busy day's hundred million).
	var heap []spreading
	// spares are spent spreaders, reused: one per bucket would be most of
	// the run's garbage.
	var spares []*spreader
	cur := <-r.free
	send := func() error {
		if len(cur.items) == 0 {
			return nil
		}
		cur.refs.Store(int32(len(workers)))
		cur.instances = r.instances
		for _, w := range workers {
			select {
			case w.in <- cur:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		select {
		case cur = <-r.free:
		case <-ctx.Done():
			return ctx.Err()
		}
		cur.items = cur.items[:0]
		return nil
	}
	emitBefore := func(t int64) error {
		for len(heap) > 0 && heap[0].next < t {
			sp := heap[0].sp
			inst := sp.info.instance
			if sp.info.spread > 1 {
				inst += r.dealt % sp.info.spread
				r.dealt++
			}
			cur.items = append(cur.items, arrival{at: sp.next, service: sp.service, info: sp.info, instance: inst, warmUp: sp.warmUp})
			sp.i++
			if sp.i == sp.n {
				heap[0] = heap[len(heap)-1]
				heap = heap[:len(heap)-1]
				spares = append(spares, sp)
			} else {
				sp.next = sp.at()
				heap[0].next = sp.next
			}
			siftDown(heap)
			if len(cur.items) == batchSize {
				if err := send(); err != nil {
					return err
				}
			}
		}
		return nil
	}
	lastReport := -1.0
	err := r.in.Traffic.ScanTraffic(ctx, ledger.TrafficQuery{Since: since, Until: r.in.Until}, func(b *ledger.TrafficBucket) error {
		start := int64(b.Start.Sub(since))
		if err := emitBefore(start); err != nil {
			return err
		}
		info := r.info(b)
		warmUp := b.Start.Before(r.in.Since)
		if !warmUp {
			for i := range max(1, info.spread) {
				r.instanceInWindow[info.instance+i] = true // those it is dealt to, when split
			}
			r.flowInWindow[info.flow] = true
			r.buckets++
			r.requests += b.Requests
			rc := info.recorded
			if rc == nil {
				rc = r.recorded[[2]int{info.flow, info.instance}]
				if rc == nil {
					rc = &recordedCounts{}
					r.recorded[[2]int{info.flow, info.instance}] = rc
				}
				info.recorded = rc
			}
			rc.requests += b.Requests
			rc.rejected += b.Rejected
			if info.skip {
				r.skipped += b.Requests
			}
		}
		if info.skip {
			return nil
		}
		if b.Requests > 0 {
			var sp *spreader
			if n := len(spares); n > 0 {
				sp, spares = spares[n-1], spares[:n-1]
			} else {
				sp = new(spreader)
			}
			*sp = spreader{start: start, step: float64(b.Width) / float64(b.Requests), n: b.Requests,
				service: r.serviceOf(b, info), info: info, warmUp: warmUp}
			sp.next = sp.at()
			heap = append(heap, spreading{next: sp.next, sp: sp})
			siftUp(heap, len(heap)-1)
		}
		if f := float64(start) / span; r.in.Progress != nil && f-lastReport >= 0.01 {
			lastReport = f
			r.in.Progress(f)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := emitBefore(1<<63 - 1); err != nil {
		return err
	}
	if err := send(); err != nil {
		return err
	}
	if r.in.Progress != nil {
		r.in.Progress(1)
	}
	return nil
}

// serviceOf estimates how long each of the bucket's requests held its
// seats. The audit events give each request's latency, which includes its
// wait in an APF queue, and say the wait only past 500 ms. A second
// without refusals had little queueing: the mean served latency, less the
// waits the API server did report, is the estimate, and is remembered as
// the flow's calm service time. A second in which the API server refused
// some of the flow's requests had its level full, so its requests waited:
// the flow's calm service time when it had a calm second before in the
// window; else the fastest served request of its last few such seconds
// (saturatedSpan), which still includes the shortest wait (the model
// then overstates such a flow's service a little, and its rejections). A
// second whose requests were all refused: the series' previous estimate.
func (r *runner) serviceOf(b *ledger.TrafficBucket, info *seriesInfo) int64 {
	served := b.Requests - b.Rejected
	st := &info.service
	at := b.Start.Unix()
	var svc int64 = -1
	switch {
	case served > 0 && b.Rejected > 0 && st.calm > 0:
		svc = st.calm
	case served > 0 && b.Rejected > 0 && b.ServedLatencyMin > 0:
		svc = st.fastest(at, int64(b.ServedLatencyMin))
	case served > 0 && b.ServedLatencySum > 0:
		svc = max(0, int64(b.ServedLatencySum-b.APFWaitSum)/served)
		st.calm = svc
	case served > 0 && b.LatencySum > 0:
		// Recorded before the served latency was (migration 00009): every
		// request's latency, 429s included.
		svc = max(0, int64(b.LatencySum-b.APFWaitSum)/b.Requests)
	}
	if svc < 0 {
		return st.last
	}
	st.last = svc
	return svc
}

// saturatedSpan is how many seconds of a flow's refusals the fastest
// served request is looked for in.
const saturatedSpan = 5

// serviceState is what serviceOf remembers of a series.
type serviceState struct {
	// last is the latest estimate; calm the latest of a second without
	// refusals.
	last, calm int64
	// mins are the fastest served latencies of its latest seconds with
	// refusals, by second.
	mins [saturatedSpan]struct{ at, min int64 }
}

// fastest notes second at's fastest served request and returns the fastest
// of the span's seconds ending at at.
func (st *serviceState) fastest(at, m int64) int64 {
	slot := &st.mins[at%saturatedSpan]
	if slot.at != at || slot.min <= 0 || m < slot.min {
		*slot = struct{ at, min int64 }{at, m}
	}
	out := m
	for _, x := range st.mins {
		if x.min > 0 && x.at > at-saturatedSpan && x.at <= at {
			out = min(out, x.min)
		}
	}
	return out
}

// info is the bucket's series, classified under every configuration the
// first time it is seen.
func (r *runner) info(b *ledger.TrafficBucket) *seriesInfo {
	if in, ok := r.seriesOf[b.SeriesID]; ok {
		return in
	}
	s := b.Series
	s.Groups = slices.Clone(s.Groups)
	in := &seriesInfo{series: s, skip: s.Class == ledger.ClassLongRunning}
	inst, ok := r.instanceOf[s.Instance]
	if !ok {
		inst = len(r.instances)
		r.instanceOf[s.Instance] = inst
		if n := r.in.UnnamedSplit; s.Instance == "" && n > 1 {
			// Traffic whose API server the webhook did not name, split
			// evenly over the instances the cluster lists.
			for i := range n {
				r.instances = append(r.instances, fmt.Sprintf("%s%d of %d", UnnamedPrefix, i+1, n))
			}
		} else {
			r.instances = append(r.instances, s.Instance)
		}
	}
	in.instance = inst
	for len(r.instanceInWindow) < len(r.instances) {
		r.instanceInWindow = append(r.instanceInWindow, false)
	}
	if s.Instance == "" && r.in.UnnamedSplit > 1 {
		in.spread = r.in.UnnamedSplit
	}
	key := flowKey(&s)
	flow, ok := r.flowOf[key]
	if !ok {
		flow = len(r.flows)
		r.flowOf[key] = flow
		fs := s
		fs.Instance = ""
		r.flows = append(r.flows, &fs)
		r.flowInWindow = append(r.flowInWindow, false)
	}
	in.flow = flow
	for i, p := range r.plans {
		in.plans[i] = p.classify(&s)
	}
	if !ok {
		r.flowSeries = append(r.flowSeries, in)
	}
	r.seriesOf[b.SeriesID] = in
	return in
}

// spreading is a heap entry: a spreader and its next arrival.
type spreading struct {
	next int64
	sp   *spreader
}

func siftUp(h []spreading, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].next <= h[i].next {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func siftDown(h []spreading) {
	i, n := 0, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		if r := l + 1; r < n && h[r].next < h[l].next {
			l = r
		}
		if h[i].next <= h[l].next {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}
