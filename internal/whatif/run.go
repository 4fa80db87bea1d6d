package whatif

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/apfsim"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// UnnamedPrefix starts the name of a simulated server that traffic naming
// no instance was dealt to (Input.UnnamedSplit).
const UnnamedPrefix = "estimated: "

// DefaultWarmUp is how much traffic before the window a run simulates
// first, uncounted, so that a window opening in the middle of a storm
// starts with its queues full and its seats lent as they were, not idle:
// more than a queued request's longest wait (15 s) and a few of the
// borrowing's 10 s adjustments.
const DefaultWarmUp = time.Minute

// DefaultServerCL is an API server's total concurrency limit by default:
// --max-requests-inflight 400 plus --max-mutating-requests-inflight 200.
const DefaultServerCL = 600

// Input is what a run needs.
type Input struct {
	Traffic      ledger.TrafficStore
	Since, Until time.Time
	Current      Config
	// Draft is the whole configuration to compare (Overlay of the current
	// one and the draft's objects); nil runs the current one only (the
	// backtest).
	Draft *Config
	// ServerCL is an instance's total concurrency limit (nil or 0:
	// DefaultServerCL).
	ServerCL func(instance string) int
	// WaitLimit: apfsim.Options.WaitLimit. Samples: the plot's points
	// (default 120).
	WaitLimit time.Duration
	Samples   int
	// Objects tells a resource's stored objects and their estimated size
	// in all, as the API server's metrics report them
	// (apiserver_resource_objects, apiserver_resource_size_estimate_bytes):
	// what weighs a LIST (width.go). nil, or ok false: unknown, one seat.
	Objects func(group, resource string) (objects, bytes int64, ok bool)
	// UnnamedSplit is how many API servers the traffic that names none
	// (an audit webhook without the per-instance path) is dealt to, round
	// robin: the instances the cluster's EndpointSlice lists. 0 or 1: one.
	UnnamedSplit int
	// WarmUp is how long before Since the traffic is simulated first,
	// uncounted (0: DefaultWarmUp; negative: none). Only buckets that
	// start within [Since, Until) are counted, read or recorded.
	WarmUp time.Duration
	// Progress is told the fraction of the window read, from 0 to 1.
	Progress func(fraction float64)
}

// warmUp is in's warm-up.
func (in Input) warmUp() time.Duration {
	switch {
	case in.WarmUp < 0:
		return 0
	case in.WarmUp == 0:
		return DefaultWarmUp
	}
	return in.WarmUp
}

// Run simulates the window.
func Run(ctx context.Context, in Input) (*Result, error) {
	started := time.Now()
	if !in.Until.After(in.Since) {
		return nil, fmt.Errorf("whatif: the window's end %v is not after its start %v", in.Until, in.Since)
	}
	if in.Samples <= 0 {
		in.Samples = 120
	}
	configs := []Config{in.Current}
	if in.Draft != nil {
		configs = append(configs, *in.Draft)
	}
	if in.Draft != nil {
		if err := CheckDraft(in.Current, *in.Draft); err != nil {
			return nil, fmt.Errorf("the draft: %w", err)
		}
	}
	plans := make([]*plan, len(configs))
	for i, c := range configs {
		p, err := newPlan(c, in)
		if err != nil {
			if i == 1 {
				return nil, fmt.Errorf("the draft: %w", err)
			}
			return nil, fmt.Errorf("the current configuration: %w", err)
		}
		plans[i] = p
	}
	r := &runner{in: in, plans: plans, seriesOf: map[int64]*seriesInfo{}, flowOf: map[string]int{}, instanceOf: map[string]int{}}
	span, warm := in.Until.Sub(in.Since), in.warmUp()
	opt := apfsim.Options{WaitLimit: in.WaitLimit, Span: warm + span, PlotFrom: warm, Samples: in.Samples}
	workers := make([]*worker, len(plans))
	var wg sync.WaitGroup
	for i, p := range plans {
		workers[i] = &worker{plan: p, which: i, opt: opt, in: make(chan *batch, batchesInFlight)}
		wg.Add(1)
		go func(w *worker) {
			defer wg.Done()
			w.run(r)
		}(workers[i])
	}
	err := r.read(ctx, workers)
	for _, w := range workers {
		close(w.in)
	}
	wg.Wait()
	if err != nil {
		return nil, err
	}
	for _, w := range workers {
		if w.err != nil {
			return nil, w.err
		}
	}
	res := r.result(workers, warm+span+time.Minute)
	res.Elapsed = time.Since(started)
	return res, nil
}

// plan is one configuration made ready to classify and simulate.
type plan struct {
	schemas  []*flowcontrolv1.FlowSchema
	levels   apf.Levels
	plcs     []*flowcontrolv1.PriorityLevelConfiguration
	levelIdx map[string]int
	serverCL func(string) int
	objects  func(group, resource string) (int64, int64, bool)
	// byCL caches the instantiated levels per server concurrency limit.
	mu   sync.Mutex
	byCL map[int][]apfsim.Level
}

func newPlan(c Config, in Input) (*plan, error) {
	if err := Check(c); err != nil {
		return nil, err
	}
	p := &plan{schemas: c.FlowSchemas, levels: apf.LevelsOf(c.Levels), plcs: withMandatory(c.Levels),
		levelIdx: map[string]int{}, byCL: map[int][]apfsim.Level{}, objects: in.Objects}
	sort.Slice(p.plcs, func(i, j int) bool { return p.plcs[i].Name < p.plcs[j].Name })
	for i, pl := range p.plcs {
		p.levelIdx[pl.Name] = i
	}
	p.serverCL = func(inst string) int {
		if in.ServerCL != nil {
			if cl := in.ServerCL(inst); cl > 0 {
				return cl
			}
		}
		return DefaultServerCL
	}
	if _, err := p.levelsFor(DefaultServerCL); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *plan) levelsFor(serverCL int) ([]apfsim.Level, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ls, ok := p.byCL[serverCL]; ok {
		return ls, nil
	}
	ls, err := apfsim.Levels(p.plcs, serverCL)
	if err != nil {
		return nil, err
	}
	p.byCL[serverCL] = ls
	return ls, nil
}

// seriesPlan is where a configuration puts a series.
type seriesPlan struct {
	level      int
	hash       uint64
	hand       []int // the queues hash deals in level (apfsim.Hand)
	seats      int
	flowSchema string
}

// seriesInfo is a series as the run knows it, made once by the reader and
// never changed after: the workers read it concurrently.
type seriesInfo struct {
	series   ledger.TrafficSeries
	instance int
	flow     int
	skip     bool // long-running: APF does not hold it
	spread   int  // > 1: dealt over that many simulated servers from instance on
	plans    [2]seriesPlan
	// recorded and service are the reader's per-series state, found once
	// here rather than in a map for each of a day's tens of millions of
	// buckets.
	recorded *recordedCounts
	service  serviceState
}

// classify places a series in p, as startRequest does: the first matching
// FlowSchema, its level, the flow's hash when the level has more than one
// queue, and its seats. A LIST weighs what the API server's work estimator
// gives it for the resource's stored objects (listSeats); every other
// request one seat: a write's extra seats for the watches it notifies
// need the watch counts, which neither the traffic nor the metrics keep
// per resource. (The estimator itself is not imported: it would bring
// etcd's client and gRPC into the console.)
func (p *plan) classify(s *ledger.TrafficSeries) seriesPlan {
	req := apf.Request{User: s.User, Groups: s.Groups, IsResourceRequest: s.Resource != "", Verb: s.Verb,
		APIGroup: s.APIGroup, Resource: s.Resource, Subresource: s.Subresource, Namespace: s.Namespace, Path: s.NonResourceURL}
	c := apf.Classify(p.schemas, p.levels, req)
	sp := seriesPlan{level: p.levelIdx[c.PriorityLevelName], flowSchema: c.FlowSchema.Name, seats: 1}
	pl := p.plcs[sp.level]
	// Queues, hand size and max seats hardly depend on the server's limit.
	base, _ := p.levelsFor(DefaultServerCL)
	if lim := pl.Spec.Limited; lim != nil && lim.LimitResponse.Queuing != nil && lim.LimitResponse.Queuing.Queues > 1 {
		sp.hash = apfsim.FlowHash(c.FlowSchema.Name, c.Distinguisher.Value)
		sp.hand = apfsim.Hand(base[sp.level], sp.hash)
	}
	if s.Verb == "list" && s.Resource != "" && p.objects != nil && pl.Spec.Type != flowcontrolv1.PriorityLevelEnablementExempt {
		if n, size, ok := p.objects(s.APIGroup, s.Resource); ok {
			sp.seats = listSeats(n, size, base[sp.level].MaxSeats)
		}
	}
	return sp
}

// flowKey is a series' identity without its instance.
func flowKey(s *ledger.TrafficSeries) string {
	return strings.Join([]string{s.User, strings.Join(s.Groups, "\x00"), s.Verb, s.APIGroup, s.Resource, s.Subresource,
		s.Namespace, s.NonResourceURL, s.Class}, "\x01")
}

var errStopped = errors.New("whatif: stopped")
