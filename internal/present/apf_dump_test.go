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

// With several instances the section is a table: one row per instance, with
// its own numbers or why it has none, and their total.
func TestPriorityLevelDumpSectionPerInstance(t *testing.T) {
	own := func(waiting, rejected int) *apfload.Load {
		return &apfload.Load{Dump: map[string]apfload.LevelDump{"workload-low": {ActiveQueues: min(waiting, 1), Idle: waiting == 0, Waiting: waiting, Rejected: rejected}}}
	}
	ld := &apfload.Load{At: time.Unix(0, 0),
		Dump: map[string]apfload.LevelDump{"workload-low": {ActiveQueues: 1, Waiting: 7, Rejected: 35}},
		Instances: []apfload.InstanceLoad{
			{Name: "127.0.0.1:6443", Load: own(0, 0)},
			{Name: "127.0.0.2:6443", Load: own(7, 35)},
			{Name: "127.0.0.3:6443", Load: &apfload.Load{DumpErr: errors.New("forbidden")}},
			{Name: "127.0.0.4:6443", Err: errors.New("connection refused")},
		}}
	sec := PriorityLevelDumpSection("workload-low", APFLoadState{Allowed: true, Load: ld, Interval: 10 * time.Second}, true, "/debug/x")
	if sec.Title != "Queues (API server debug dump, all 4 API server instances)" {
		t.Errorf("title %q", sec.Title)
	}
	want := [][]string{
		{"127.0.0.1", "idle", "0", "0", "0", "0", "0", "0", "0"},
		{"127.0.0.2", "active", "1", "7", "0", "0", "35", "0", "0"},
		{"127.0.0.3", "dump not read: forbidden", "", "", "", "", "", "", ""},
		{"127.0.0.4", "did not answer (unknown, not zero)", "", "", "", "", "", "", ""},
		{"Total", "active", "1", "7", "0", "0", "35", "0", "0"},
	}
	if len(sec.Rows) != len(want) {
		t.Fatalf("rows %q", sec.Rows)
	}
	for i := range want {
		if strings.Join(sec.Rows[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d = %q, want %q", i, sec.Rows[i], want[i])
		}
	}
}
