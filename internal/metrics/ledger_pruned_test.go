package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

type fakePruned struct{}

func (fakePruned) PrunedForSize() int64 { return 1500 }

func TestLedgerPrunedCollector(t *testing.T) {
	r := New()
	r.RegisterLedgerPruned(nil) // no ledger: nothing registered
	r.RegisterLedgerPruned(fakePruned{})
	want := `
# HELP clusterdesk_ledger_pruned_for_size_total Ledger entries pruned, oldest first, because the ledger held more than --ledger-max-entries (since the console started).
# TYPE clusterdesk_ledger_pruned_for_size_total counter
clusterdesk_ledger_pruned_for_size_total 1500
`
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(want), "clusterdesk_ledger_pruned_for_size_total"); err != nil {
		t.Error(err)
	}
}
