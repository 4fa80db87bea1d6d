package whatif

import (
	"sort"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/apfsim"
)

// result finishes every simulation at end and sums them per level and flow.
func (r *runner) result(workers []*worker, end time.Duration) *Result {
	res := &Result{Since: r.in.Since, Until: r.in.Until, Buckets: r.buckets, Requests: r.requests, Skipped: r.skipped}
	// Instances sorted by name; order maps the run's indexes to them.
	// An instance only the warm-up saw is none of the window's: its
	// simulation counted nothing.
	var order []int
	for i := range r.instances {
		if r.instanceInWindow[i] {
			order = append(order, i)
		}
	}
	sort.Slice(order, func(a, b int) bool { return r.instances[order[a]] < r.instances[order[b]] })
	for _, i := range order {
		res.Instances = append(res.Instances, r.instances[i])
	}
	flowCounts := make([][]apfsim.Counts, len(workers))
	for wi, w := range workers {
		out := Outcome{}
		byName := map[string]*Level{}
		for _, pl := range w.plan.plcs {
			l := &Level{Name: pl.Name, Samples: make([]apfsim.Sample, r.in.Samples)}
			byName[pl.Name] = l
		}
		flowCounts[wi] = make([]apfsim.Counts, len(r.flows))
		for _, inst := range order {
			var sim *apfsim.Sim
			if inst < len(w.sims) {
				sim = w.sims[inst]
			}
			if sim == nil {
				continue
			}
			sr := sim.Finish(end)
			for _, lr := range sr.Levels {
				l := byName[lr.Name]
				l.Exempt = lr.Exempt
				l.NominalCL += lr.NominalCL
				add(&l.Predicted, lr.Counts)
				for i, s := range lr.Samples {
					l.Samples[i].Seats += s.Seats
					l.Samples[i].Waiting += s.Waiting
					l.Samples[i].Limit += s.Limit
				}
				l.Instances = append(l.Instances, InstanceLevel{Instance: r.instances[inst], ServerCL: w.cls[inst],
					NominalCL: lr.NominalCL, Predicted: lr.Counts})
			}
			for f, c := range sr.Flows {
				add(&flowCounts[wi][f], c)
			}
		}
		// What the API server did, under this configuration's classification.
		for key, rc := range r.recorded {
			// A series of the flow stands for it: classification does not
			// depend on the instance.
			in := r.flowSeries[key[0]]
			if in == nil || in.skip {
				continue
			}
			l := byName[w.plan.plcs[in.plans[wi].level].Name]
			l.RecordedRequests += rc.requests
			l.RecordedRejected += rc.rejected
			for i := range l.Instances {
				if l.Instances[i].Instance == r.instances[key[1]] {
					l.Instances[i].RecordedRequests += rc.requests
					l.Instances[i].RecordedRejected += rc.rejected
				}
			}
		}
		for _, pl := range w.plan.plcs {
			out.Levels = append(out.Levels, *byName[pl.Name])
		}
		if wi == 0 {
			res.Current = out
		} else {
			res.Draft = &out
		}
	}
	// Each flow's recorded counts over its instances, in one pass: a loop
	// over the recorded counts per flow would be quadratic in the flows.
	perFlow := make([]recordedCounts, len(r.flows))
	for key, rc := range r.recorded {
		perFlow[key[0]].requests += rc.requests
		perFlow[key[0]].rejected += rc.rejected
	}
	for f, s := range r.flows {
		if !r.flowInWindow[f] {
			continue // the warm-up's alone
		}
		fl := Flow{Series: *s, Requests: perFlow[f].requests, RecordedRejected: perFlow[f].rejected}
		for wi, w := range workers {
			in := r.flowSeries[f]
			sp := in.plans[wi]
			o := FlowOutcome{FlowSchema: sp.flowSchema, Level: w.plan.plcs[sp.level].Name, Seats: sp.seats, Predicted: flowCounts[wi][f]}
			if wi == 0 {
				fl.Current = o
			} else {
				fl.Draft = &o
			}
		}
		res.Flows = append(res.Flows, fl)
	}
	return res
}

func add(a *apfsim.Counts, b apfsim.Counts) {
	a.Arrived += b.Arrived
	a.Dispatched += b.Dispatched
	a.QueueFull += b.QueueFull
	a.ConcurrencyLimit += b.ConcurrencyLimit
	a.TimeOut += b.TimeOut
	a.Queued += b.Queued
	a.WaitSum += b.WaitSum
}
