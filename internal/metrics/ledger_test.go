package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

type fakeWebhook struct{}

func (fakeWebhook) EventCounts() (int64, int64, int64, int64) { return 10, 6, 1, 3 }
func (fakeWebhook) AnonymousRefused() int64                   { return 5 }
func (fakeWebhook) RefusedBatches(reason string) int64 {
	if reason == "busy" {
		return 4
	}
	return 0
}

type fakeConsole struct{}

func (fakeConsole) Stored() int64    { return 7 }
func (fakeConsole) Dropped() int64   { return 1 }
func (fakeConsole) Failed() int64    { return 2 }
func (fakeConsole) Discarded() int64 { return 3 }

func TestLedgerCollector(t *testing.T) {
	r := New()
	r.RegisterLedger(fakeWebhook{}, []string{"unauthenticated", "busy"}, fakeConsole{})
	for name, want := range map[string]int{
		"clusterdesk_ledger_webhook_events_total":          4,
		"clusterdesk_ledger_webhook_refused_batches_total": 2,
		"clusterdesk_ledger_console_records_total":         4,
	} {
		if n, err := testutil.GatherAndCount(r.Gatherer(), name); err != nil || n != want {
			t.Errorf("%s: %d series (%v), want %d", name, n, err, want)
		}
	}
	// Without a webhook (none configured) only the console's series.
	r = New()
	r.RegisterLedger(nil, nil, fakeConsole{})
	if n, _ := testutil.GatherAndCount(r.Gatherer(), "clusterdesk_ledger_webhook_events_total"); n != 0 {
		t.Errorf("webhook series without a webhook: %d", n)
	}
}
