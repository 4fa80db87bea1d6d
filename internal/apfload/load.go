package apfload

import "time"

// Load is what the pages show: the latest scrape's gauges and, once two
// scrapes exist, the rates between them.
type Load struct {
	At time.Time // when the latest scrape was taken
	// Window is the time between the two scrapes the rates come from; zero
	// until the second scrape (then every rate is unknown).
	Window  time.Duration
	Levels  map[string]LevelLoad
	Schemas map[string]SchemaLoad
	// Webhooks is each admission webhook's health (webhooks.go).
	Webhooks map[WebhookKey]WebhookLoad
	// Resources are the stored objects per resource (ResourceKey), as the
	// latest scrape read them; with Instances, the first instance's that
	// reports any (they share one storage).
	Resources map[string]ResourceStats
	// Dump is dump_priority_levels as read with this scrape, by level (nil
	// when the sampler does not read it, or DumpErr says why it could not).
	// With Instances, it is their dumps' sum (sumDumps) and each instance's
	// own is in its InstanceLoad.
	Dump    map[string]LevelDump
	DumpErr error
	// Instances is each API server instance's own load when the sampler reads
	// them one by one (the numbers above are then their sum), sorted by name;
	// empty when it reads one address (Fallback says why).
	Instances []InstanceLoad
	// Fallback says why the numbers are one instance's, read through the
	// kubeconfig's server (whichever instance answers); empty when every
	// instance is read at its own address, or the sampler was not asked to.
	Fallback string
}

// Unreachable names the instances that did not answer the latest scrape.
func (l Load) Unreachable() []string {
	var out []string
	for _, i := range l.Instances {
		if !i.Reachable() {
			out = append(out, i.Name)
		}
	}
	return out
}

// HasRates reports whether the rates are known (two scrapes taken).
func (l Load) HasRates() bool { return l.Window > 0 }

// LevelLoad is one priority level's load.
type LevelLoad struct {
	HasLimits                              bool // the API server reports its seat limits (not an Exempt level before 1.28)
	NominalSeats, LowerSeats, UpperSeats   float64
	CurrentLimitSeats                      float64
	ExecutingSeats, Executing, Waiting     float64
	DispatchedPerSecond, RejectedPerSecond float64
	Rejected                               []ReasonRate // per second by reason, in the API server's order
	RejectedTotal                          float64      // since the API server started
}

// SchemaLoad is one FlowSchema's load.
type SchemaLoad struct {
	PriorityLevel                          string
	Executing, Waiting                     float64
	DispatchedPerSecond, RejectedPerSecond float64
	Rejected                               []ReasonRate
	// Matched is false when the API server has counted no request for it
	// since it started (no dispatched and no rejected series).
	Matched bool
}

// ReasonRate is rejections per second for one reason.
type ReasonRate struct {
	Reason    string
	PerSecond float64
	Total     float64
}

// loadOf computes the load from the latest scrape cur and, when prev is not
// nil, the rates from prev to cur.
func loadOf(prev *Totals, prevAt time.Time, cur Totals, at time.Time) Load {
	ld := Load{At: at, Levels: make(map[string]LevelLoad, len(cur.Levels)), Schemas: make(map[string]SchemaLoad, len(cur.Schemas)),
		Resources: cur.Resources}
	if prev != nil && at.After(prevAt) {
		ld.Window = at.Sub(prevAt)
	}
	secs := ld.Window.Seconds()
	for name, c := range cur.Levels {
		l := LevelLoad{
			HasLimits: c.HasLimits, NominalSeats: c.NominalSeats, LowerSeats: c.LowerSeats, UpperSeats: c.UpperSeats,
			CurrentLimitSeats: c.CurrentLimitSeats, ExecutingSeats: c.ExecutingSeats, Executing: c.Executing, Waiting: c.Waiting,
		}
		var p *LevelTotals
		if prev != nil {
			p = prev.Levels[name]
		}
		if secs > 0 {
			var pd float64
			var pr map[string]float64
			if p != nil {
				pd, pr = p.Dispatched, p.Rejected
			}
			l.DispatchedPerSecond = rate(pd, c.Dispatched, p != nil, secs)
			l.Rejected, l.RejectedPerSecond = reasonRates(pr, c.Rejected, p != nil, secs)
		} else {
			l.Rejected, _ = reasonRates(nil, c.Rejected, false, 0)
		}
		for _, v := range c.Rejected {
			l.RejectedTotal += v
		}
		ld.Levels[name] = l
	}
	for name, c := range cur.Schemas {
		s := SchemaLoad{PriorityLevel: c.PriorityLevel, Executing: c.Executing, Waiting: c.Waiting,
			Matched: c.SeenDispatched && c.Dispatched > 0 || len(c.Rejected) > 0}
		var p *SchemaTotals
		if prev != nil {
			p = prev.Schemas[name]
		}
		if secs > 0 {
			var pd float64
			var pr map[string]float64
			if p != nil {
				pd, pr = p.Dispatched, p.Rejected
			}
			s.DispatchedPerSecond = rate(pd, c.Dispatched, p != nil, secs)
			s.Rejected, s.RejectedPerSecond = reasonRates(pr, c.Rejected, p != nil, secs)
		} else {
			s.Rejected, _ = reasonRates(nil, c.Rejected, false, 0)
		}
		ld.Schemas[name] = s
	}
	var prevHooks map[WebhookKey]*WebhookTotals
	if prev != nil {
		prevHooks = prev.Webhooks
	}
	ld.Webhooks = webhookLoads(prevHooks, cur.Webhooks, secs)
	return ld
}

// rate is a counter's increase per second. A counter that went down was
// reset (the API server restarted, or another instance answered): like
// Prometheus's rate(), the new value is the increase since the reset. A
// series absent from the previous scrape started at zero within the window.
func rate(prev, cur float64, hadPrev bool, secs float64) float64 {
	inc := cur
	if hadPrev && cur >= prev {
		inc = cur - prev
	}
	return inc / secs
}

func reasonRates(prev, cur map[string]float64, hadPrev bool, secs float64) ([]ReasonRate, float64) {
	var out []ReasonRate
	var sum float64
	for _, r := range sortedReasons(cur) {
		rr := ReasonRate{Reason: r, Total: cur[r]}
		if secs > 0 {
			p, ok := prev[r]
			rr.PerSecond = rate(p, cur[r], hadPrev && ok, secs)
			sum += rr.PerSecond
		}
		out = append(out, rr)
	}
	return out, sum
}
