package metrics

import "github.com/prometheus/client_golang/prometheus"

// LedgerWebhookSource is what the audit webhook's metrics read at scrape
// time (ingest.Receiver).
type LedgerWebhookSource interface {
	// EventCounts: events in accepted batches, new ones stored, duplicates
	// (a retried batch), and those the ledger does not keep.
	EventCounts() (received, stored, duplicate, ignored int64)
	// AnonymousRefused: refused writes of unauthenticated clients, counted
	// and not stored.
	AnonymousRefused() int64
	// RefusedBatches is how many batches were refused for reason.
	RefusedBatches(reason string) int64
}

// LedgerConsoleSource is what the console's records into the ledger read
// at scrape time (ingest.ConsoleFeed).
type LedgerConsoleSource interface {
	Stored() int64
	Dropped() int64
	Failed() int64
	// Discarded: records of a batch the ledger kept refusing while it
	// answered (never retried forever).
	Discarded() int64
}

// RegisterLedger exports the ledger's ingestion: the audit webhook's events
// by outcome and its refused batches by reason (reasons is the fixed set,
// so the labels stay bounded whatever a client sends), and the console's own
// records stored, dropped on a full queue, and failed Appends. Either
// source may be nil (no webhook; no ledger).
func (r *Registry) RegisterLedger(webhook LedgerWebhookSource, reasons []string, console LedgerConsoleSource) {
	r.MustRegister(&ledgerCollector{webhook: webhook, reasons: reasons, console: console})
}

var (
	ledgerEventsDesc = prometheus.NewDesc(Namespace+"_ledger_webhook_events_total",
		"Audit events the API server sent to the ledger's webhook in accepted batches, by outcome: stored, duplicate (already stored: a retried batch), ignored (not one of the console's kinds, or not a write) or anonymous_refused (a write refused to a client that did not authenticate: counted, not stored).",
		[]string{"outcome"}, nil)
	ledgerRefusedDesc = prometheus.NewDesc(Namespace+"_ledger_webhook_refused_batches_total",
		"Batches the ledger's webhook refused, by reason: unauthenticated, too_large, busy (429), bad_request, unavailable (the ledger did not commit: 503, retried by the API server).",
		[]string{"reason"}, nil)
	ledgerConsoleDesc = prometheus.NewDesc(Namespace+"_ledger_console_records_total",
		"The console's own write records sent to the ledger, by outcome: stored, dropped (queue full; the API server's audit events still have the write) failed (an Append that failed and is retried) or discarded (a batch the ledger kept refusing while it answered, given up after a few tries so that the records behind it are stored).",
		[]string{"outcome"}, nil)
)

type ledgerCollector struct {
	webhook LedgerWebhookSource
	reasons []string
	console LedgerConsoleSource
}

func (c *ledgerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- ledgerEventsDesc
	ch <- ledgerRefusedDesc
	ch <- ledgerConsoleDesc
}

func (c *ledgerCollector) Collect(ch chan<- prometheus.Metric) {
	if c.webhook != nil {
		_, stored, dup, ignored := c.webhook.EventCounts()
		ch <- prometheus.MustNewConstMetric(ledgerEventsDesc, prometheus.CounterValue, float64(stored), "stored")
		ch <- prometheus.MustNewConstMetric(ledgerEventsDesc, prometheus.CounterValue, float64(dup), "duplicate")
		ch <- prometheus.MustNewConstMetric(ledgerEventsDesc, prometheus.CounterValue, float64(ignored), "ignored")
		ch <- prometheus.MustNewConstMetric(ledgerEventsDesc, prometheus.CounterValue, float64(c.webhook.AnonymousRefused()), "anonymous_refused")
		for _, reason := range c.reasons {
			ch <- prometheus.MustNewConstMetric(ledgerRefusedDesc, prometheus.CounterValue, float64(c.webhook.RefusedBatches(reason)), reason)
		}
	}
	if c.console != nil {
		ch <- prometheus.MustNewConstMetric(ledgerConsoleDesc, prometheus.CounterValue, float64(c.console.Stored()), "stored")
		ch <- prometheus.MustNewConstMetric(ledgerConsoleDesc, prometheus.CounterValue, float64(c.console.Dropped()), "dropped")
		ch <- prometheus.MustNewConstMetric(ledgerConsoleDesc, prometheus.CounterValue, float64(c.console.Failed()), "failed")
		ch <- prometheus.MustNewConstMetric(ledgerConsoleDesc, prometheus.CounterValue, float64(c.console.Discarded()), "discarded")
	}
}
