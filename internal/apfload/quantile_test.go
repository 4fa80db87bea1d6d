package apfload

import (
	"math"
	"testing"
)

func TestQuantile(t *testing.T) {
	inf := math.Inf(1)
	// The API server's buckets for webhook latency
	// (staging/src/k8s.io/apiserver/pkg/admission/metrics/metrics.go).
	hist := func(counts ...float64) []Bucket {
		bounds := []float64{0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25, inf}
		out := make([]Bucket, len(bounds))
		for i := range bounds {
			out[i] = Bucket{UpperBound: bounds[i], Count: counts[i]}
		}
		return out
	}
	cases := []struct {
		name    string
		q       float64
		buckets []Bucket
		want    float64
	}{
		// 10 in the first bucket: rank 5 is half-way from 0 to 0.005.
		{"first bucket starts at zero", 0.5, hist(10, 10, 10, 10, 10, 10, 10, 10, 10), 0.0025},
		// 100 observations, 50 ≤ 0.1, 100 ≤ 0.5: p99 rank 99 is 49/50 of 0.1..0.5.
		{"interpolates inside the bucket", 0.99, hist(0, 0, 50, 100, 100, 100, 100, 100, 100), 0.1 + 0.4*49.0/50},
		{"median on a bucket edge", 0.5, hist(0, 0, 50, 100, 100, 100, 100, 100, 100), 0.1},
		// All above 25 s: Prometheus answers the highest finite bound.
		{"rank in +Inf answers the last finite bound", 0.99, hist(0, 0, 0, 0, 0, 0, 0, 0, 4), 25},
		// Timed out at 1 s: all in (1, 2.5].
		{"one second timeouts", 0.5, hist(0, 0, 0, 0, 0, 4, 4, 4, 4), 1.75},
		{"no observations", 0.5, hist(0, 0, 0, 0, 0, 0, 0, 0, 0), math.NaN()},
		{"no +Inf bucket", 0.5, []Bucket{{1, 1}, {2, 2}}, math.NaN()},
		{"unsorted input", 0.5, []Bucket{{inf, 4}, {2, 4}, {1, 0}}, 1.5},
		{"non-monotonic counts are flattened", 0.75, []Bucket{{1, 2}, {2, 1}, {inf, 4}}, 2},
		{"q above 1", 1.5, hist(1, 1, 1, 1, 1, 1, 1, 1, 1), inf},
		{"q below 0", -1, hist(1, 1, 1, 1, 1, 1, 1, 1, 1), math.Inf(-1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Quantile(c.q, c.buckets)
			if math.IsNaN(c.want) != math.IsNaN(got) || (!math.IsNaN(c.want) && math.Abs(got-c.want) > 1e-12) {
				t.Fatalf("Quantile(%v) = %v, want %v", c.q, got, c.want)
			}
		})
	}
}
