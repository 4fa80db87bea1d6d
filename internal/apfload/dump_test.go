package apfload

import (
	"strings"
	"testing"
)

// dumpText has the shape kube-apiserver v1.36 writes dump_priority_levels in
// (tabwriter over ",\t"-joined columns).
const dumpText = `PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests
catch-all,         0,            true,   false,       0,               0,                 12,                 0,                0,                0
exempt,            0,            true,   false,       0,               0,                 0,                  0,                0,                0
workload-low,      2,            false,  true,        7,               3,                 4711,               35,               2,                1
`

func TestParseDump(t *testing.T) {
	got, err := ParseDump(strings.NewReader(dumpText))
	if err != nil {
		t.Fatal(err)
	}
	want := LevelDump{ActiveQueues: 2, Quiescing: true, Waiting: 7, Executing: 3, Dispatched: 4711, Rejected: 35, TimedOut: 2, Cancelled: 1}
	if got["workload-low"] != want {
		t.Errorf("workload-low = %+v, want %+v", got["workload-low"], want)
	}
	if d := got["catch-all"]; !d.Idle || d.Dispatched != 12 || len(got) != 3 {
		t.Errorf("catch-all = %+v (%d levels)", d, len(got))
	}
}

func TestParseDumpOlderColumnsAndErrors(t *testing.T) {
	// A server without some columns: the rest still read.
	got, err := ParseDump(strings.NewReader("PriorityLevelName, ActiveQueues, IsIdle\nglobal-default, 1, false\n"))
	if err != nil || got["global-default"] != (LevelDump{ActiveQueues: 1}) {
		t.Errorf("older dump: %+v %v", got, err)
	}
	for name, body := range map[string]string{
		"empty":        "",
		"no header":    "catch-all, 0, true\n",
		"short row":    "PriorityLevelName, ActiveQueues, IsIdle\ncatch-all, 0\n",
		"not a number": "PriorityLevelName, ActiveQueues\ncatch-all, many\n",
		"too large":    "PriorityLevelName, ActiveQueues\n" + strings.Repeat("x, 1\n", maxDumpBytes/5+1),
	} {
		if _, err := ParseDump(strings.NewReader(body)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
