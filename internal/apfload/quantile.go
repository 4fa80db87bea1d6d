package apfload

import (
	"math"
	"sort"
)

// Bucket is one cumulative histogram bucket: Count observations were at most
// UpperBound (the last bucket's bound is +Inf).
type Bucket struct {
	UpperBound float64
	Count      float64
}

// Quantile estimates the q-quantile (0 ≤ q ≤ 1) of a cumulative histogram the
// way Prometheus's histogram_quantile does (prometheus/prometheus
// promql/quantile.go, bucketQuantile): linear interpolation inside the bucket
// that holds the rank, the lowest bucket starting at 0, and a rank that falls
// into the +Inf bucket answered with the highest finite bound. It returns NaN
// when there is no observation or no +Inf bucket. buckets may be unsorted.
func Quantile(q float64, buckets []Bucket) float64 {
	if math.IsNaN(q) || q < 0 || q > 1 || len(buckets) < 2 {
		if q < 0 {
			return math.Inf(-1)
		}
		if q > 1 {
			return math.Inf(1)
		}
		return math.NaN()
	}
	b := append([]Bucket(nil), buckets...)
	sort.Slice(b, func(i, j int) bool { return b[i].UpperBound < b[j].UpperBound })
	if !math.IsInf(b[len(b)-1].UpperBound, 1) {
		return math.NaN()
	}
	// Counts of rates taken from two scrapes may dip by float error or a
	// reset; Prometheus forces them monotonic the same way (ensureMonotonic).
	for i := 1; i < len(b); i++ {
		if b[i].Count < b[i-1].Count {
			b[i].Count = b[i-1].Count
		}
	}
	total := b[len(b)-1].Count
	if total <= 0 {
		return math.NaN()
	}
	rank := q * total
	i := sort.Search(len(b)-1, func(i int) bool { return b[i].Count >= rank })
	if i == len(b)-1 {
		return b[len(b)-2].UpperBound
	}
	if i == 0 && b[0].UpperBound <= 0 {
		return b[0].UpperBound
	}
	start, end, count := 0.0, b[i].UpperBound, b[i].Count
	if i > 0 {
		start = b[i-1].UpperBound
		count -= b[i-1].Count
		rank -= b[i-1].Count
	}
	if count == 0 {
		return end
	}
	return start + (end-start)*(rank/count)
}
