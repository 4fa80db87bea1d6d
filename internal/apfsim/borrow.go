package apfsim

import (
	"math"
)

// integrator mirrors fairqueuing's integrator (fairqueuing/integrator.go):
// the time-weighted average, deviation and maximum of a level's seat
// demand over a period.
type integrator struct {
	start, last int64
	x           float64
	sum, sum2   float64
	max         float64
}

func (g *integrator) set(t int64, x float64) {
	if dt := float64(t - g.last); dt > 0 {
		g.sum += g.x * dt
		g.sum2 += g.x * g.x * dt
		g.last = t
	}
	g.x = x
	// Not math.Max: x counts seats (never NaN nor -0), and this runs twice
	// per simulated request.
	if x > g.max {
		g.max = x
	}
}

// reset returns the period's results and starts the next one at the
// current value (integrator.Reset).
func (g *integrator) reset(t int64) (avg, dev, mx float64, dur int64) {
	g.set(t, g.x)
	dur = t - g.start
	if dur > 0 {
		avg = g.sum / float64(dur)
		dev = math.Sqrt(math.Max(0, g.sum2/float64(dur)-avg*avg))
	}
	mx = g.max
	g.start, g.sum, g.sum2, g.max = t, 0, 0, g.x
	return avg, dev, mx, dur
}

// seatDemandStats mirrors apf_controller.go's seatDemandStats.update.
type seatDemandStats struct {
	highWatermark int
	smoothed      float64
}

func (st *seatDemandStats) update(avg, dev, mx float64, dur int64) {
	st.highWatermark = int(math.Round(mx))
	if dur <= 0 {
		return
	}
	envelope := avg + dev
	st.smoothed = math.Max(envelope, seatDemandSmoothingCoefficient*st.smoothed+(1-seatDemandSmoothingCoefficient)*envelope)
}

// adjust mirrors configController.updateBorrowingLocked, run every
// borrowingAdjustmentPeriod: each level's current concurrency limit is
// reallocated from its seat demand over the period, between its lower
// bound (what it keeps, or its demand's high watermark up to its nominal)
// and its upper bound (nominal plus borrowing), exempt levels taking what
// they used first.
func (s *Sim) adjust(t int64) {
	type item struct {
		qs       *queueSet
		minCurCL int
		alloc    allocProblemItem
	}
	var items []item
	exemptCL := map[*queueSet]int{}
	var minCLSum, minCurrentCLSum int
	remaining := s.nominalSum
	for _, qs := range s.sets {
		s.expire(qs, t)
		qs.syncTime(t)
		qs.seatDemand.update(qs.demand.reset(t))
		l := qs.lvl
		if l.Exempt {
			c := max(l.MinCL, qs.seatDemand.highWatermark)
			exemptCL[qs] = c
			remaining -= c
			continue
		}
		minCur := max(l.MinCL, min(l.NominalCL, qs.seatDemand.highWatermark))
		items = append(items, item{qs: qs, minCurCL: minCur, alloc: allocProblemItem{lowerBound: float64(minCur),
			upperBound: float64(l.MaxCL), target: math.Max(float64(minCur), qs.seatDemand.smoothed)}})
		minCLSum += l.MinCL
		minCurrentCLSum += minCur
	}
	if len(items) == 0 && s.nominalSum > 0 {
		return
	}
	var allocs []float64
	var shareFrac float64
	switch {
	case remaining <= minCLSum:
	case remaining <= minCurrentCLSum:
		shareFrac = float64(remaining-minCLSum) / float64(minCurrentCLSum-minCLSum)
	default:
		problem := make([]allocProblemItem, len(items))
		for i := range items {
			problem[i] = items[i].alloc
		}
		var err error
		if allocs, _, err = computeConcurrencyAllocation(s.nominalSum, problem); err != nil {
			allocs = make([]float64, len(items)) // upstream keeps the current limits
			for i := range items {
				allocs[i] = float64(items[i].qs.cl)
			}
		}
	}
	for qs, c := range exemptCL {
		qs.cl = c
	}
	for i, it := range items {
		l := it.qs.lvl
		switch {
		case remaining <= minCLSum:
			it.qs.cl = l.MinCL
		case remaining <= minCurrentCLSum:
			it.qs.cl = l.MinCL + int(math.Round(float64(it.minCurCL-l.MinCL)*shareFrac))
		default:
			it.qs.cl = int(math.Round(allocs[i]))
		}
	}
	// A new limit dispatches what it now fits (setConfiguration).
	for _, qs := range s.sets {
		s.dispatchAsMuchAsPossible(qs, t)
		s.noteDemand(qs, t)
		s.sample(qs, t)
	}
}
