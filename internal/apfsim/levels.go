package apfsim

import (
	"fmt"
	"math"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// Upstream constants (k8s.io/apiserver v0.37.2).
const (
	// borrowingAdjustmentPeriod and seatDemandSmoothingCoefficient:
	// pkg/util/flowcontrol/apf_controller.go.
	borrowingAdjustmentPeriod      = 10e9 // ns
	seatDemandSmoothingCoefficient = 0.977
	// priorityLevelMaxSeatsPercent: apf_controller.go (the work estimator's
	// per-level cap on a request's seats).
	priorityLevelMaxSeatsPercent = 0.15
	// estimatedServiceDuration is the queueset's guess of a request's
	// duration when it computes virtual finish times
	// (fairqueuing/queueset/queueset.go, queueSetCompleter.Complete).
	estimatedServiceDuration = 3e-3 // seconds
)

// Level is one priority level as the API server instantiates it for a
// server concurrency limit.
type Level struct {
	Name   string
	Exempt bool
	// NominalCL, MinCL and MaxCL are its concurrency limits: nominal, the
	// least it keeps when it lends, the most it may reach borrowing.
	NominalCL, MinCL, MaxCL int
	// Queues is 0 when the level rejects instead of queueing (or is
	// exempt); HandSize and QueueLengthLimit are then 0 too.
	Queues, HandSize, QueueLengthLimit int
	// MaxSeats caps one request's seats in this level (the work estimator's
	// MaxSeatsTracker); 0 for a level that does not queue (the estimator's
	// own limits then apply).
	MaxSeats int
}

// Levels instantiates plcs for an API server whose total concurrency limit
// (--max-requests-inflight plus --max-mutating-requests-inflight) is
// serverCL, mirroring cfgMeal.finishQueueSetReconfigsLocked and
// plSpecCommons (apf_controller.go): nominal CL = ceil(serverCL × shares /
// Σ shares), lendable and borrowing limits rounded from their percents, no
// borrowing limit meaning the whole server.
func Levels(plcs []*flowcontrolv1.PriorityLevelConfiguration, serverCL int) ([]Level, error) {
	if serverCL < 1 {
		return nil, fmt.Errorf("the server concurrency limit must be at least 1, not %d", serverCL)
	}
	var shareSum float64
	for _, pl := range plcs {
		shares, _, _, err := commons(pl)
		if err != nil {
			return nil, err
		}
		shareSum += float64(shares)
	}
	out := make([]Level, 0, len(plcs))
	for _, pl := range plcs {
		shares, lendable, borrowing, _ := commons(pl)
		var nominal int
		if shareSum > 0 {
			nominal = int(math.Ceil(float64(serverCL) * float64(shares) / shareSum))
		}
		lendableCL := int(math.Round(float64(nominal) * float64(lendable) / 100))
		borrowingCL := serverCL
		if borrowing != nil {
			borrowingCL = int(math.Round(float64(nominal) * float64(*borrowing) / 100))
		}
		l := Level{Name: pl.Name, Exempt: pl.Spec.Type == flowcontrolv1.PriorityLevelEnablementExempt,
			NominalCL: nominal, MinCL: nominal - lendableCL, MaxCL: nominal + borrowingCL}
		if lim := pl.Spec.Limited; lim != nil && lim.LimitResponse.Type == flowcontrolv1.LimitResponseTypeQueue && lim.LimitResponse.Queuing != nil {
			q := lim.LimitResponse.Queuing
			l.Queues, l.HandSize, l.QueueLengthLimit = int(q.Queues), int(q.HandSize), int(q.QueueLengthLimit)
			if l.Queues < 1 || l.HandSize < 1 || l.HandSize > l.Queues || l.QueueLengthLimit < 1 {
				return nil, fmt.Errorf("priority level %s: queues %d, hand size %d, queue length limit %d are not a valid queuing configuration",
					pl.Name, l.Queues, l.HandSize, l.QueueLengthLimit)
			}
			// MAX(1, MIN(0.15 × nominal, nominal / hand size)); the work
			// estimator applies its own ceiling on top (10 seats, 100 for
			// LISTs estimated by size).
			l.MaxSeats = int(math.Max(1, math.Min(math.Ceil(float64(nominal)*priorityLevelMaxSeatsPercent), float64(nominal/l.HandSize))))
		}
		out = append(out, l)
	}
	return out, nil
}

// commons mirrors plSpecCommons: the shares and percents of either kind of
// level, defaulted as the API server's v1 defaulting does (30 shares for a
// Limited level without any, 0 for Exempt; lendable 0).
func commons(pl *flowcontrolv1.PriorityLevelConfiguration) (shares int32, lendable int32, borrowing *int32, err error) {
	switch pl.Spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if e := pl.Spec.Exempt; e != nil {
			if e.NominalConcurrencyShares != nil {
				shares = *e.NominalConcurrencyShares
			}
			if e.LendablePercent != nil {
				lendable = *e.LendablePercent
			}
		}
		// No borrowing limit: the whole server, as for a Limited level
		// without one (plSpecCommons returns nil for Exempt).
		return shares, lendable, nil, nil
	case flowcontrolv1.PriorityLevelEnablementLimited:
		lim := pl.Spec.Limited
		if lim == nil {
			return 0, 0, nil, fmt.Errorf("priority level %s is Limited but has no limited section", pl.Name)
		}
		shares = 30
		if lim.NominalConcurrencyShares != nil {
			shares = *lim.NominalConcurrencyShares
		}
		if lim.LendablePercent != nil {
			lendable = *lim.LendablePercent
		}
		borrowing = lim.BorrowingLimitPercent
	default:
		return 0, 0, nil, fmt.Errorf("priority level %s has type %q (Exempt or Limited)", pl.Name, pl.Spec.Type)
	}
	if shares < 0 || lendable < 0 || lendable > 100 || (borrowing != nil && *borrowing < 0) {
		return 0, 0, nil, fmt.Errorf("priority level %s: shares %d and lendable %d%% must be non-negative (lendable at most 100%%)", pl.Name, shares, lendable)
	}
	return shares, lendable, borrowing, nil
}
