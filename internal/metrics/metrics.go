// Package metrics holds the console's Prometheus registry: Go runtime and process
// collectors, HTTP request metrics, live-update (SSE) metrics and informer cache
// metrics. Metrics are read at scrape time where the numbers exist already (cache
// counts, SSE connection counts), so the hot paths pay nothing extra.
//
// A nil *Registry is valid: its methods do nothing and its constructors return
// working, unregistered collectors, so packages can take an optional registry.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every clusterdesk metric.
const Namespace = "clusterdesk"

// Registry is the process's metrics registry. It is not a global: main builds one
// and hands it to whoever registers.
type Registry struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
}

// New returns a registry with the Go runtime and process collectors and the HTTP
// request metrics registered.
func New() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	r := &Registry{
		reg: reg,
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests served, by method, route template and status code.",
		}, []string{"method", "route", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Time to serve an HTTP request, by method and route template (server-sent event streams excluded).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route"}),
	}
	reg.MustRegister(r.httpRequests, r.httpDuration)
	return r
}

// MustRegister registers collectors; it panics on a duplicate name, which is a
// programming error found by the first test that builds the dependency.
func (r *Registry) MustRegister(cs ...prometheus.Collector) {
	if r == nil {
		return
	}
	r.reg.MustRegister(cs...)
}

// Gatherer returns the registry for tests (prometheus/testutil) and exposition.
func (r *Registry) Gatherer() prometheus.Gatherer {
	if r == nil {
		return prometheus.NewRegistry()
	}
	return r.reg
}

// Handler serves the registry in the Prometheus text (or OpenMetrics) format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.Gatherer(), promhttp.HandlerOpts{
		// A failing collector leaves its metrics out instead of failing the scrape.
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// NewCounterVec returns a counter named clusterdesk_<subsystem>_<name>, registered
// in r (when r is not nil). For example the access-review cache:
// NewCounterVec("access", "review_cache_total", "...", "result").
func (r *Registry) NewCounterVec(subsystem, name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Subsystem: subsystem, Name: name, Help: help,
	}, labels)
	r.MustRegister(c)
	return c
}

// UnmatchedRoute is the route label of requests no route matched: the raw path
// would make one time series per URL anyone cares to send.
const UnmatchedRoute = "unmatched"

// ObserveHTTP records one served request. route must be the route template
// ("/crds/:name"), never the raw path; stream tells a server-sent event stream,
// whose duration is the connection's life and stays out of the histogram.
// The method and code are mapped onto fixed sets (labels.go).
func (r *Registry) ObserveHTTP(method, route string, code int, d time.Duration, stream bool) {
	if r == nil {
		return
	}
	if route == "" {
		route = UnmatchedRoute
	}
	method = methodLabel(method)
	r.httpRequests.WithLabelValues(method, route, codeLabel(code)).Inc()
	if !stream {
		r.httpDuration.WithLabelValues(method, route).Observe(d.Seconds())
	}
}
