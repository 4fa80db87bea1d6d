package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
)

func TestObserveHTTP(t *testing.T) {
	r := New()
	r.ObserveHTTP("GET", "/crds/:name", 200, 30*time.Millisecond, false)
	r.ObserveHTTP("GET", "/crds/:name", 200, 10*time.Millisecond, false)
	r.ObserveHTTP("GET", "", 404, time.Millisecond, false)
	r.ObserveHTTP("GET", "/events", 200, time.Hour, true)

	want := `
# HELP clusterdesk_http_requests_total HTTP requests served, by method, route template and status code.
# TYPE clusterdesk_http_requests_total counter
clusterdesk_http_requests_total{code="200",method="GET",route="/crds/:name"} 2
clusterdesk_http_requests_total{code="200",method="GET",route="/events"} 1
clusterdesk_http_requests_total{code="404",method="GET",route="unmatched"} 1
`
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(want), "clusterdesk_http_requests_total"); err != nil {
		t.Error(err)
	}
	// The stream's hour-long connection stays out of the latency histogram.
	if n := testutil.CollectAndCount(r.httpDuration); n != 2 {
		t.Errorf("duration series = %d, want 2 (crds and unmatched, not the stream)", n)
	}
}

func TestNilRegistry(t *testing.T) {
	var r *Registry
	r.ObserveHTTP("GET", "/", 200, time.Millisecond, false)
	c := r.NewCounterVec("access", "review_cache_total", "help", "result")
	c.WithLabelValues("hit").Inc()
	if got := testutil.ToFloat64(c.WithLabelValues("hit")); got != 1 {
		t.Errorf("counter from a nil registry = %v, want a working counter", got)
	}
	r.RegisterSSE(fakeSSE{})
	r.RegisterCache(fakeCache{})
}

func TestNewCounterVecRegisters(t *testing.T) {
	r := New()
	c := r.NewCounterVec("access", "review_cache_total", "Access review cache lookups.", "result")
	c.WithLabelValues("hit").Add(3)
	c.WithLabelValues("miss").Inc()
	want := `
# HELP clusterdesk_access_review_cache_total Access review cache lookups.
# TYPE clusterdesk_access_review_cache_total counter
clusterdesk_access_review_cache_total{result="hit"} 3
clusterdesk_access_review_cache_total{result="miss"} 1
`
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(want), "clusterdesk_access_review_cache_total"); err != nil {
		t.Error(err)
	}
}

type fakeSSE struct{}

func (fakeSSE) Stats() live.Stats {
	return live.Stats{Connections: 3, Evicted: 1, Published: 10, Sent: 25, Refused: 4, Busy: 2}
}

type fakeCache struct{}

func (fakeCache) Ready() bool { return false }

func (fakeCache) Statuses() []kube.KindStatus {
	return []kube.KindStatus{
		{Kind: kube.Kind{ID: kube.CSRs}, State: kube.StateSynced, Count: 42, SyncedAt: time.Unix(1700000000, 500_000_000)},
		{Kind: kube.Kind{ID: kube.CRDs}, State: kube.StateError, Err: errors.New("watch lost"), Count: 7, SyncedAt: time.Unix(1700000100, 0)},
		{Kind: kube.Kind{ID: kube.CSIDrivers}, State: kube.StateForbidden},
	}
}

func TestSSEAndCacheCollectors(t *testing.T) {
	r := New()
	r.RegisterSSE(fakeSSE{})
	r.RegisterCache(fakeCache{})
	want := `
# HELP clusterdesk_sse_connections Server-sent event connections being served.
# TYPE clusterdesk_sse_connections gauge
clusterdesk_sse_connections 3
# HELP clusterdesk_sse_events_sent_total Events queued to server-sent event connections (heartbeats not counted).
# TYPE clusterdesk_sse_events_sent_total counter
clusterdesk_sse_events_sent_total 25
# HELP clusterdesk_sse_evictions_total Connections cut off for falling behind.
# TYPE clusterdesk_sse_evictions_total counter
clusterdesk_sse_evictions_total 1
# HELP clusterdesk_sse_refused_total Connections refused: reason user (the user holds the most streams a user may) or replica (the replica serves --max-streams).
# TYPE clusterdesk_sse_refused_total counter
clusterdesk_sse_refused_total{reason="replica"} 2
clusterdesk_sse_refused_total{reason="user"} 4
# HELP clusterdesk_sse_messages_published_total Live-update messages published (each rendered once, whatever the number of connections).
# TYPE clusterdesk_sse_messages_published_total counter
clusterdesk_sse_messages_published_total 10
# HELP clusterdesk_cache_objects Objects in the shared informer cache, by kind (0 before the first sync).
# TYPE clusterdesk_cache_objects gauge
clusterdesk_cache_objects{kind="crds"} 7
clusterdesk_cache_objects{kind="csidrivers"} 0
clusterdesk_cache_objects{kind="csrs"} 42
# HELP clusterdesk_cache_last_sync_timestamp_seconds When each kind's cache last became synced (first sync or recovery of its watch), Unix time; absent before.
# TYPE clusterdesk_cache_last_sync_timestamp_seconds gauge
clusterdesk_cache_last_sync_timestamp_seconds{kind="crds"} 1.7000001e+09
clusterdesk_cache_last_sync_timestamp_seconds{kind="csrs"} 1.7000000005e+09
# HELP clusterdesk_cache_ready 1 when discovery is done and every kind is synced or settled as forbidden or not served (/readyz).
# TYPE clusterdesk_cache_ready gauge
clusterdesk_cache_ready 0
`
	names := []string{
		"clusterdesk_sse_connections", "clusterdesk_sse_events_sent_total", "clusterdesk_sse_evictions_total",
		"clusterdesk_sse_messages_published_total", "clusterdesk_sse_refused_total", "clusterdesk_cache_objects",
		"clusterdesk_cache_last_sync_timestamp_seconds", "clusterdesk_cache_ready",
	}
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	// Every state of every kind is exported, 1 for the current one only.
	for _, tc := range []struct {
		kind, state string
		want        float64
	}{
		{"csrs", "synced", 1}, {"csrs", "error", 0}, {"crds", "error", 1}, {"crds", "synced", 0},
		{"csidrivers", "forbidden", 1}, {"csidrivers", "syncing", 0},
	} {
		t.Run(tc.kind+"/"+tc.state, func(t *testing.T) {
			body := scrape(t, r)
			line := `clusterdesk_cache_state{kind="` + tc.kind + `",state="` + tc.state + `"} `
			wantLine := line + map[float64]string{0: "0", 1: "1"}[tc.want]
			if !strings.Contains(body, wantLine+"\n") {
				t.Errorf("scrape lacks %q", wantLine)
			}
		})
	}
}

func TestHandlerServesRuntimeMetrics(t *testing.T) {
	body := scrape(t, New())
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		if !strings.Contains(body, "\n"+name+" ") {
			t.Errorf("scrape lacks %s", name)
		}
	}
}

func scrape(t *testing.T, r *Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// BenchmarkObserveHTTP is what every request pays for its metrics.
func BenchmarkObserveHTTP(b *testing.B) {
	r := New()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.ObserveHTTP("GET", "/:kind/:name", 200+i%2, time.Millisecond, false)
	}
}

// BenchmarkScrape is one Prometheus scrape with the cache and SSE collectors.
func BenchmarkScrape(b *testing.B) {
	r := New()
	r.RegisterSSE(fakeSSE{})
	r.RegisterCache(fakeCache{})
	r.ObserveHTTP("GET", "/", 200, time.Millisecond, false)
	h := r.Handler()
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	}
}
