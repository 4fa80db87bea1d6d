package apfflood

import (
	"context"
	"math"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// Shares is every priority level's nominalConcurrencyShares as served,
// the exempt level's included (0 by default): the API server divides its
// concurrency limit by the sum of them all.
func Shares(t testing.TB, cfg *rest.Config) map[string]int32 {
	t.Helper()
	pls, err := testcluster.NewFlowcontrol(t, cfg).PriorityLevels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int32{}
	for _, pl := range pls {
		switch {
		case pl.Spec.Limited != nil && pl.Spec.Limited.NominalConcurrencyShares != nil:
			out[pl.Name] = *pl.Spec.Limited.NominalConcurrencyShares
		case pl.Spec.Exempt != nil && pl.Spec.Exempt.NominalConcurrencyShares != nil:
			out[pl.Name] = *pl.Spec.Exempt.NominalConcurrencyShares
		default:
			out[pl.Name] = 0
		}
	}
	return out
}

// ConcurrencyLimit is the range [lo, hi] of server concurrency limits
// (--max-requests-inflight + --max-mutating-requests-inflight) that give
// every level of c its nominal seats with these shares: the API server
// gives a level ceil(serverCL * shares / sum of shares)
// (k8s.io/apiserver@v0.37.2 pkg/util/flowcontrol/apf_controller.go,
// finishQueueSetReconfigsLocked), so each level bounds serverCL to
// ((nominal-1) * sum / shares, nominal * sum / shares]. lo > hi when the
// shares changed between the read of c and that of shares.
func ConcurrencyLimit(c Counters, shares map[string]int32) (lo, hi int) {
	sum := int(SharesSum(shares))
	lo, hi = 1, math.MaxInt
	for name, s := range shares {
		l, ok := c.Levels[name]
		if !ok || s <= 0 || l.NominalSeats < 1 {
			continue
		}
		nominal := int(l.NominalSeats)
		lo = max(lo, (nominal-1)*sum/int(s)+1)
		hi = min(hi, nominal*sum/int(s))
	}
	return lo, hi
}

// SharesSum is the sum of the levels' shares, which the API server divides
// its concurrency limit by.
func SharesSum(shares map[string]int32) int32 {
	var sum int32
	for _, s := range shares {
		sum += s
	}
	return sum
}

// NominalSeats is what the API server gives a level of shares shares out
// of sum with the server concurrency limit serverCL (apf_controller.go).
func NominalSeats(serverCL int, shares, sum int32) int {
	return int(math.Ceil(float64(serverCL) * float64(shares) / float64(sum)))
}
