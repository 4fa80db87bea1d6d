package whatif

import (
	"time"

	"github.com/clusterdesk/clusterdesk/internal/apfsim"
)

// worker simulates one configuration: a Sim per instance, made when the
// instance's first request arrives.
type worker struct {
	plan  *plan
	which int
	opt   apfsim.Options
	in    chan *batch
	sims  []*apfsim.Sim
	cls   []int // each instance's server concurrency limit
	err   error
}

func (w *worker) run(r *runner) {
	for b := range w.in {
		if w.err == nil {
			w.err = w.feed(b)
		}
		if b.refs.Add(-1) == 0 {
			r.free <- b
		}
	}
}

func (w *worker) feed(b *batch) error {
	for i := range b.items {
		a := &b.items[i]
		in := a.info
		for a.instance >= len(w.sims) {
			w.sims = append(w.sims, nil)
			w.cls = append(w.cls, 0)
		}
		sim := w.sims[a.instance]
		if sim == nil {
			cl := w.plan.serverCL(b.instances[a.instance])
			levels, err := w.plan.levelsFor(cl)
			if err != nil {
				return err
			}
			sim = apfsim.New(levels, w.opt)
			w.sims[a.instance], w.cls[a.instance] = sim, cl
		}
		sp := &in.plans[w.which]
		if err := sim.Arrive(apfsim.Arrival{At: time.Duration(a.at), Level: sp.level, Hash: sp.hash, Hand: sp.hand, Seats: sp.seats,
			Service: time.Duration(a.service), Flow: in.flow, WarmUp: a.warmUp}); err != nil {
			return err
		}
	}
	return nil
}
