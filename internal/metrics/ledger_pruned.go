package metrics

import "github.com/prometheus/client_golang/prometheus"

// LedgerPrunedSource is what the size bound's metric reads at scrape time:
// the ledger's store (internal/ledger), when it bounds its size.
type LedgerPrunedSource interface {
	PrunedForSize() int64
}

var ledgerPrunedDesc = prometheus.NewDesc(Namespace+"_ledger_pruned_for_size_total",
	"Ledger entries pruned, oldest first, because the ledger held more than --ledger-max-entries (since the console started).",
	nil, nil)

// RegisterLedgerPruned exports the entries the ledger's size bound pruned;
// a store that does not count them (none, or one without the bound's
// counter) registers nothing.
func (r *Registry) RegisterLedgerPruned(store any) {
	if src, ok := store.(LedgerPrunedSource); ok {
		r.MustRegister(&ledgerPrunedCollector{src: src})
	}
}

type ledgerPrunedCollector struct{ src LedgerPrunedSource }

func (c *ledgerPrunedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- ledgerPrunedDesc }

func (c *ledgerPrunedCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(ledgerPrunedDesc, prometheus.CounterValue, float64(c.src.PrunedForSize()))
}
