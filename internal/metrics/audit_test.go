package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

type fakeAudit struct{}

func (fakeAudit) DroppedWrites() int64   { return 2 }
func (fakeAudit) DroppedAttempts() int64 { return 300 }
func (fakeAudit) Failed() int64          { return 5 }

func TestAuditCollector(t *testing.T) {
	r := New()
	r.RegisterAudit(fakeAudit{})
	want := `
# HELP clusterdesk_audit_events_dropped_total Audit Kubernetes Events dropped because the Event queue was full, by record: write (the API server made it) or attempt (refused, failed or dry run).
# TYPE clusterdesk_audit_events_dropped_total counter
clusterdesk_audit_events_dropped_total{record="attempt"} 300
clusterdesk_audit_events_dropped_total{record="write"} 2
# HELP clusterdesk_audit_events_failed_total Audit Kubernetes Events the API server refused or did not answer.
# TYPE clusterdesk_audit_events_failed_total counter
clusterdesk_audit_events_failed_total 5
`
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(want),
		"clusterdesk_audit_events_dropped_total", "clusterdesk_audit_events_failed_total"); err != nil {
		t.Error(err)
	}
}
