package metrics

import "github.com/prometheus/client_golang/prometheus"

// AuditSource is what the audit trail's metrics read at scrape time (audit.Recorder).
type AuditSource interface {
	DroppedWrites() int64
	DroppedAttempts() int64
	Failed() int64
}

// RegisterAudit exports the audit Events not written: dropped because the
// Event queue was full (by record: a write the API server made, or an
// attempt that changed nothing) and refused or unanswered by the API server.
// A dropped write's Event is the one to alert on: the object then carries no
// Event of the change (the JSON audit line still has it).
func (r *Registry) RegisterAudit(src AuditSource) {
	r.MustRegister(&auditCollector{src: src})
}

var (
	auditDroppedDesc = prometheus.NewDesc(Namespace+"_audit_events_dropped_total",
		"Audit Kubernetes Events dropped because the Event queue was full, by record: write (the API server made it) or attempt (refused, failed or dry run).",
		[]string{"record"}, nil)
	auditFailedDesc = prometheus.NewDesc(Namespace+"_audit_events_failed_total",
		"Audit Kubernetes Events the API server refused or did not answer.", nil, nil)
)

type auditCollector struct{ src AuditSource }

func (c *auditCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- auditDroppedDesc
	ch <- auditFailedDesc
}

func (c *auditCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(auditDroppedDesc, prometheus.CounterValue, float64(c.src.DroppedWrites()), "write")
	ch <- prometheus.MustNewConstMetric(auditDroppedDesc, prometheus.CounterValue, float64(c.src.DroppedAttempts()), "attempt")
	ch <- prometheus.MustNewConstMetric(auditFailedDesc, prometheus.CounterValue, float64(c.src.Failed()))
}
