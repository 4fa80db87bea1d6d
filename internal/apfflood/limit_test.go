package apfflood

import "testing"

// The suggested levels' nominal seats at the default server concurrency
// limit, 600 (400 + 200 in flight), as the Kubernetes documentation lists
// them (Flow control, "Priority level configurations"): 245 shares in all.
func TestConcurrencyLimitOfTheSuggestedLevels(t *testing.T) {
	shares := map[string]int32{"exempt": 0, "system": 30, "node-high": 40, "leader-election": 10,
		"workload-high": 40, "workload-low": 100, "global-default": 20, "catch-all": 5}
	nominal := map[string]float64{"system": 74, "node-high": 98, "leader-election": 25,
		"workload-high": 98, "workload-low": 245, "global-default": 49, "catch-all": 13}
	c := Counters{Levels: map[string]Level{}}
	for name, n := range nominal {
		c.Levels[name] = Level{NominalSeats: n}
	}
	lo, hi := ConcurrencyLimit(c, shares)
	if lo > 600 || hi < 600 || hi-lo > 5 {
		t.Errorf("server concurrency limit in [%d, %d], want a narrow range holding 600", lo, hi)
	}
	for name, n := range nominal {
		if got := NominalSeats(600, shares[name], 245); float64(got) != n {
			t.Errorf("%s: %d nominal seats, want %v", name, got, n)
		}
	}
	// A level of 1 share beside them (the floods' levels) gets 3.
	if got := NominalSeats(600, 1, 246); got != 3 {
		t.Errorf("1 share of 246: %d seats, want 3", got)
	}
}

func TestExpectedShape(t *testing.T) {
	s := expectedShape(Limited(5, 8, 2, 2), 600, map[string]int32{"a": 245, "b": 5})
	if s != (levelShape{Nominal: 12, Lower: 12, Upper: 12, Queues: 8}) {
		t.Errorf("shape %+v", s)
	}
}
