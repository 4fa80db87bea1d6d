package present

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func fieldsText(s model.Section) string {
	var b strings.Builder
	for _, f := range s.Fields {
		b.WriteString(f.Label + ": " + f.Value + "\n")
	}
	return b.String()
}

func TestPriorityLevelDumpSection(t *testing.T) {
	ld := &apfload.Load{At: time.Unix(0, 0), Dump: map[string]apfload.LevelDump{
		"workload-low": {ActiveQueues: 2, Quiescing: true, Waiting: 7, Executing: 3, Dispatched: 4711, Rejected: 35, TimedOut: 2, Cancelled: 1}}}
	st := APFLoadState{Allowed: true, Load: ld, Interval: 10 * time.Second}
	got := fieldsText(PriorityLevelDumpSection("workload-low", st, true, "/debug/x"))
	for _, want := range []string{"Active queues: 2", "State: quiescing", "Waiting: 7", "Executing: 3", "Dispatched: 4711", "Rejected: 35", "Timed out: 2", "Cancelled: 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if got := fieldsText(PriorityLevelDumpSection("workload-low", st, false, "/debug/x")); !strings.Contains(got, "Your identity may not read /debug/x") || strings.Contains(got, "4711") {
		t.Errorf("not allowed:\n%s", got)
	}
	failed := APFLoadState{Allowed: true, Load: &apfload.Load{DumpErr: errors.New("forbidden")}}
	if got := fieldsText(PriorityLevelDumpSection("workload-low", failed, true, "/debug/x")); !strings.Contains(got, "could not read the API server's dump: forbidden") {
		t.Errorf("dump error:\n%s", got)
	}
	if got := fieldsText(PriorityLevelDumpSection("other", st, true, "/debug/x")); !strings.Contains(got, "no row for this priority level") {
		t.Errorf("unknown level:\n%s", got)
	}
}
