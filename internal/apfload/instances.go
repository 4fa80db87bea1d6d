package apfload

import (
	"context"
	"math"
	"sort"
	"time"
)

// Instance is one API server instance the sampler reads at its own address.
type Instance struct {
	Name    string // IP:port, what the pages show
	Metrics Fetch
	Dump    Fetch // nil: its priority-level dump is not read
}

// Discover lists the API server's instances (the default/kubernetes
// EndpointSlices, kube.APIServerInstances).
type Discover func(ctx context.Context) ([]Instance, error)

// InstanceLoad is one instance's part of a Load: its own load, with rates from
// two reads of that instance, or why it could not be read.
type InstanceLoad struct {
	Name string
	// Load is nil when the instance did not answer this scrape (Err says
	// why): an unreachable instance is not an idle one.
	Load *Load
	Err  error
	// Restarted is true when the instance's process changed since its
	// previous read: its rates count from the restart, not from a negative.
	Restarted bool
}

// Reachable tells whether the instance answered the latest scrape.
func (i InstanceLoad) Reachable() bool { return i.Load != nil }

// instanceState is what the sampler keeps of one instance between scrapes:
// its previous totals, so its rates come from two reads of the same process.
type instanceState struct {
	prev   *Totals
	prevAt time.Time
}

// instanceLoad computes one instance's load from its read cur (taken at at)
// and its state, which it advances. A different process start time, or
// counters that went down (rate()), is a restart: the rates then count every
// request since the restart, which happened within the window.
func (st *instanceState) instanceLoad(name string, cur Totals, at time.Time) InstanceLoad {
	prev := st.prev
	restarted := prev != nil && prev.StartTime != 0 && cur.StartTime != 0 && prev.StartTime != cur.StartTime
	if restarted {
		prev = &Totals{}
	}
	ld := loadOf(prev, st.prevAt, cur, at)
	st.prev, st.prevAt = &cur, at
	return InstanceLoad{Name: name, Load: &ld, Restarted: restarted}
}

// sumLoads is the cluster's load: the sum of the instances that answered
// (seats, requests and rates add up across instances: each has its own
// limits and queues). Webhook latency quantiles come from the added
// histograms. The priority-level dump is summed the same way (sumDumps); each
// instance's own stays in its part. The window is the longest of the
// instances' (zero while none has rates yet).
func sumLoads(at time.Time, parts []InstanceLoad) Load {
	total := Load{At: at, Levels: map[string]LevelLoad{}, Schemas: map[string]SchemaLoad{}, Webhooks: map[WebhookKey]WebhookLoad{}}
	for _, p := range parts {
		if p.Load == nil {
			continue
		}
		ld := p.Load
		total.Window = max(total.Window, ld.Window)
		if len(total.Resources) == 0 {
			total.Resources = ld.Resources
		}
		for name, l := range ld.Levels {
			t := total.Levels[name]
			t.HasLimits = t.HasLimits || l.HasLimits
			t.NominalSeats += l.NominalSeats
			t.LowerSeats += l.LowerSeats
			t.UpperSeats += l.UpperSeats
			t.CurrentLimitSeats += l.CurrentLimitSeats
			t.ExecutingSeats += l.ExecutingSeats
			t.Executing += l.Executing
			t.Waiting += l.Waiting
			t.DispatchedPerSecond += l.DispatchedPerSecond
			t.RejectedPerSecond += l.RejectedPerSecond
			t.RejectedTotal += l.RejectedTotal
			t.Rejected = addReasons(t.Rejected, l.Rejected)
			total.Levels[name] = t
		}
		for name, s := range ld.Schemas {
			t := total.Schemas[name]
			t.PriorityLevel = s.PriorityLevel
			t.Executing += s.Executing
			t.Waiting += s.Waiting
			t.DispatchedPerSecond += s.DispatchedPerSecond
			t.RejectedPerSecond += s.RejectedPerSecond
			t.Rejected = addReasons(t.Rejected, s.Rejected)
			t.Matched = t.Matched || s.Matched
			total.Schemas[name] = t
		}
		for key, w := range ld.Webhooks {
			t, seen := total.Webhooks[key]
			if !seen {
				t.P50, t.P99 = math.NaN(), math.NaN()
			}
			t.RequestsTotal += w.RequestsTotal
			t.FailOpenTotal += w.FailOpenTotal
			t.RejectedTotal += w.RejectedTotal
			t.Calls += w.Calls
			t.FailedOpen += w.FailedOpen
			t.RequestsPerSecond += w.RequestsPerSecond
			t.Rejections = addReasons(t.Rejections, w.Rejections)
			t.latency = addBuckets(t.latency, w.latency)
			t.windowLatency = addBuckets(t.windowLatency, w.windowLatency)
			total.Webhooks[key] = t
		}
	}
	for key, t := range total.Webhooks {
		t.LifetimeP99 = Quantile(0.99, t.latency)
		if t.windowLatency != nil {
			t.P50, t.P99 = Quantile(0.5, t.windowLatency), Quantile(0.99, t.windowLatency)
		}
		total.Webhooks[key] = t
	}
	total.Dump, total.DumpErr = sumDumps(parts)
	total.Instances = parts
	return total
}

// sumDumps adds the answering instances' priority-level dumps, level by
// level: queues, requests and counters add up (each instance has its own
// queue sets); a level is idle when it is idle on every instance that has
// it, and quiescing when it is on any. The error is the first instance's
// when no instance's dump was read (nil, nil: the dump is not read at all).
func sumDumps(parts []InstanceLoad) (map[string]LevelDump, error) {
	var sum map[string]LevelDump
	var firstErr error
	for _, p := range parts {
		if p.Load == nil {
			continue
		}
		if p.Load.DumpErr != nil && firstErr == nil {
			firstErr = p.Load.DumpErr
		}
		if p.Load.Dump == nil {
			continue
		}
		if sum == nil {
			sum = make(map[string]LevelDump, len(p.Load.Dump))
		}
		for name, d := range p.Load.Dump {
			t, seen := sum[name]
			if !seen {
				t.Idle = true
			}
			t.ActiveQueues += d.ActiveQueues
			t.Idle = t.Idle && d.Idle
			t.Quiescing = t.Quiescing || d.Quiescing
			t.Waiting += d.Waiting
			t.Executing += d.Executing
			t.Dispatched += d.Dispatched
			t.Rejected += d.Rejected
			t.TimedOut += d.TimedOut
			t.Cancelled += d.Cancelled
			sum[name] = t
		}
	}
	if sum != nil {
		return sum, nil
	}
	return nil, firstErr
}

// addReasons adds b's rates and totals to a's, reason by reason, in the
// API server's order.
func addReasons(a, b []ReasonRate) []ReasonRate {
	if len(b) == 0 {
		return a
	}
	perSecond, totals := map[string]float64{}, map[string]float64{}
	for _, rs := range [][]ReasonRate{a, b} {
		for _, r := range rs {
			perSecond[r.Reason] += r.PerSecond
			totals[r.Reason] += r.Total
		}
	}
	out := make([]ReasonRate, 0, len(totals))
	for _, reason := range sortedReasons(totals) {
		out = append(out, ReasonRate{Reason: reason, PerSecond: perSecond[reason], Total: totals[reason]})
	}
	return out
}

func addBuckets(a, b []Bucket) []Bucket {
	for _, x := range b {
		a = addBucket(a, x.UpperBound, x.Count)
	}
	return a
}

// sortInstances orders the instances by name, so pages list them stably.
func sortInstances(parts []InstanceLoad) {
	sort.Slice(parts, func(i, j int) bool { return parts[i].Name < parts[j].Name })
}
