package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
)

// SSESource is what the live-update metrics read at scrape time (live.Streams).
type SSESource interface {
	Stats() live.Stats
}

// RegisterSSE exports the server-sent event counters of src: open connections,
// messages published, events sent to connections and evictions. They are read at
// scrape time, so the streams pay nothing per event for them.
func (r *Registry) RegisterSSE(src SSESource) {
	r.MustRegister(&sseCollector{src: src})
}

var (
	sseOpenDesc = prometheus.NewDesc(Namespace+"_sse_connections",
		"Server-sent event connections being served.", nil, nil)
	ssePublishedDesc = prometheus.NewDesc(Namespace+"_sse_messages_published_total",
		"Live-update messages published (each rendered once, whatever the number of connections).", nil, nil)
	sseSentDesc = prometheus.NewDesc(Namespace+"_sse_events_sent_total",
		"Events queued to server-sent event connections (heartbeats not counted).", nil, nil)
	sseEvictedDesc = prometheus.NewDesc(Namespace+"_sse_evictions_total",
		"Connections cut off for falling behind.", nil, nil)
	sseRefusedDesc = prometheus.NewDesc(Namespace+"_sse_refused_total",
		"Connections refused: reason user (the user holds the most streams a user may) or replica (the replica serves --max-streams).", []string{"reason"}, nil)
)

type sseCollector struct{ src SSESource }

func (c *sseCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- sseOpenDesc
	ch <- ssePublishedDesc
	ch <- sseSentDesc
	ch <- sseEvictedDesc
	ch <- sseRefusedDesc
}

func (c *sseCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.src.Stats()
	ch <- prometheus.MustNewConstMetric(sseOpenDesc, prometheus.GaugeValue, float64(s.Connections))
	ch <- prometheus.MustNewConstMetric(ssePublishedDesc, prometheus.CounterValue, float64(s.Published))
	ch <- prometheus.MustNewConstMetric(sseSentDesc, prometheus.CounterValue, float64(s.Sent))
	ch <- prometheus.MustNewConstMetric(sseEvictedDesc, prometheus.CounterValue, float64(s.Evicted))
	ch <- prometheus.MustNewConstMetric(sseRefusedDesc, prometheus.CounterValue, float64(s.Refused), "user")
	ch <- prometheus.MustNewConstMetric(sseRefusedDesc, prometheus.CounterValue, float64(s.Busy), "replica")
}

// CacheSource is what the informer cache metrics read at scrape time (kube.Cache).
type CacheSource interface {
	Ready() bool
	Statuses() []kube.KindStatus
}

// RegisterCache exports the shared informer cache: objects per kind, each kind's
// state (syncing, synced, forbidden, error: a lost watch is error with a last
// sync time), when each kind last became synced, and overall readiness.
func (r *Registry) RegisterCache(src CacheSource) {
	r.MustRegister(&cacheCollector{src: src})
}

// cacheStates are every State, so that a state a kind is not in reads 0 rather
// than vanishing (alerts on "state == 1" then see the change).
var cacheStates = []kube.State{kube.StateSyncing, kube.StateSynced, kube.StateForbidden, kube.StateError}

var (
	cacheObjectsDesc = prometheus.NewDesc(Namespace+"_cache_objects",
		"Objects in the shared informer cache, by kind (0 before the first sync).", []string{"kind"}, nil)
	cacheStateDesc = prometheus.NewDesc(Namespace+"_cache_state",
		"1 for the state each kind's informer is in: syncing, synced, forbidden or error (watch lost or kind not served).", []string{"kind", "state"}, nil)
	cacheSyncedDesc = prometheus.NewDesc(Namespace+"_cache_last_sync_timestamp_seconds",
		"When each kind's cache last became synced (first sync or recovery of its watch), Unix time; absent before.", []string{"kind"}, nil)
	cacheReadyDesc = prometheus.NewDesc(Namespace+"_cache_ready",
		"1 when discovery is done and every kind is synced or settled as forbidden or not served (/readyz).", nil, nil)
)

type cacheCollector struct{ src CacheSource }

func (c *cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- cacheObjectsDesc
	ch <- cacheStateDesc
	ch <- cacheSyncedDesc
	ch <- cacheReadyDesc
}

func (c *cacheCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c.src.Statuses() {
		kind := string(st.Kind.ID)
		ch <- prometheus.MustNewConstMetric(cacheObjectsDesc, prometheus.GaugeValue, float64(st.Count), kind)
		for _, s := range cacheStates {
			ch <- prometheus.MustNewConstMetric(cacheStateDesc, prometheus.GaugeValue, boolValue(st.State == s), kind, string(s))
		}
		if !st.SyncedAt.IsZero() {
			ch <- prometheus.MustNewConstMetric(cacheSyncedDesc, prometheus.GaugeValue, float64(st.SyncedAt.UnixNano())/1e9, kind)
		}
	}
	ch <- prometheus.MustNewConstMetric(cacheReadyDesc, prometheus.GaugeValue, boolValue(c.src.Ready()))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
