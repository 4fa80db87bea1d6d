//go:build integration

package apfload

import (
	"context"
	"strconv"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// BenchmarkScrapeInstances is one scrape of 1, 2, … of the devcluster's
// kube-apiserver instances, each read at its own address as the console reads
// them (the EndpointSlice list, each instance's /metrics and priority-level
// dump, parse, rates, the sum): what one look costs the console per instance.
// `make test` runs it once on its two instances; the three-instance figures
// come from a devcluster started with DEVCLUSTER_APISERVERS=3.
func BenchmarkScrapeInstances(b *testing.B) {
	all := testcluster.APIServers(b, 1)
	admin := testcluster.RestConfig(b, testcluster.Admin)
	list, err := kube.APIServerInstances(admin)
	if err != nil {
		b.Fatal(err)
	}
	// Today's read, for comparison: one /metrics and dump through the
	// kubeconfig's server, no EndpointSlice list.
	b.Run("kubeconfig-server", func(b *testing.B) {
		metrics, err := kube.APIServerMetrics(admin)
		if err != nil {
			b.Fatal(err)
		}
		dump, err := kube.APIServerPriorityLevelDump(admin)
		if err != nil {
			b.Fatal(err)
		}
		s := New(metrics, Options{Dump: dump})
		b.ReportAllocs()
		for b.Loop() {
			s.scrapeOnce(b.Context())
			if _, err := s.Latest(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for n := 1; n <= len(all); n++ {
		b.Run(strconv.Itoa(n)+"-instances", func(b *testing.B) {
			discover := func(ctx context.Context) ([]Instance, error) {
				found, err := list(ctx)
				if err != nil {
					return nil, err
				}
				out := make([]Instance, 0, n)
				for _, f := range found[:min(n, len(found))] {
					out = append(out, Instance{Name: f.Address, Metrics: f.Metrics, Dump: f.Dump})
				}
				return out, nil
			}
			s := New(nil, Options{Instances: discover})
			b.ReportAllocs()
			var bytesRead int64
			for b.Loop() {
				s.scrapeOnce(b.Context())
				ld, err := s.Latest()
				if err != nil || ld.Fallback != "" || len(ld.Instances) != n || len(ld.Unreachable()) > 0 {
					b.Fatalf("scrape of %d instances: %v, fallback %q, %d instances, unreachable %v", n, err, ld.Fallback, len(ld.Instances), ld.Unreachable())
				}
				_, cost := s.Stats()
				bytesRead = cost.BytesRead
			}
			b.ReportMetric(float64(bytesRead), "metrics-bytes/scrape")
		})
	}
}
