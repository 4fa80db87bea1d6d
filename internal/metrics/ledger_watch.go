package metrics

import "github.com/prometheus/client_golang/prometheus"

// LedgerWatchSource is what the watch feed's metric reads at scrape time
// (ingest.WatchFeed): the versions the console's watch observed that
// reached the ledger, and those dropped on a full queue.
type LedgerWatchSource interface {
	Stored() int64
	Dropped() int64
}

var ledgerWatchDesc = prometheus.NewDesc(Namespace+"_ledger_watch_versions_total",
	"Object versions the console's watch observed, sent to the ledger, by outcome: stored, or dropped (a full queue, of events waiting for their diff or of entries waiting for the database: the history misses them; the API server's audit events still have the writes).",
	[]string{"outcome"}, nil)

// RegisterLedgerWatch exports the watch feed's stored and dropped versions.
// Dropped versions are holes in objects' histories, which nothing else
// shows: a CSR storm beyond the queue, or a database too slow for the watch.
func (r *Registry) RegisterLedgerWatch(src LedgerWatchSource) {
	r.MustRegister(&ledgerWatchCollector{src: src})
}

type ledgerWatchCollector struct{ src LedgerWatchSource }

func (c *ledgerWatchCollector) Describe(ch chan<- *prometheus.Desc) { ch <- ledgerWatchDesc }

func (c *ledgerWatchCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(ledgerWatchDesc, prometheus.CounterValue, float64(c.src.Stored()), "stored")
	ch <- prometheus.MustNewConstMetric(ledgerWatchDesc, prometheus.CounterValue, float64(c.src.Dropped()), "dropped")
}
