package apfload

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxDumpBytes bounds the dump read: a row is under 200 bytes, so this holds
// thousands of priority levels.
const maxDumpBytes = 1 << 20

// LevelDump is one priority level's row of the debug dump: the state of its
// queue set at the moment of the read.
type LevelDump struct {
	ActiveQueues         int  // queues holding at least one request
	Idle                 bool // nothing waits or executes
	Quiescing            bool // the level's configuration is gone; it drains
	Waiting, Executing   int
	Dispatched, Rejected int // since the level's queue set was made
	TimedOut, Cancelled  int
}

// dumpColumns are the dump's column headers, as the API server writes them in
// kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/util/flowcontrol/apf_controller_debug.go
// (dumpPriorityLevels): a tabwriter row of values joined by ",\t", headers
// first, levels sorted by name. Columns are found by header, so a server
// that leaves one out (older releases) gives zero for it.
var dumpColumns = map[string]func(*LevelDump, string) error{
	"ActiveQueues":       func(d *LevelDump, v string) error { return atoi(&d.ActiveQueues, v) },
	"IsIdle":             func(d *LevelDump, v string) error { return atob(&d.Idle, v) },
	"IsQuiescing":        func(d *LevelDump, v string) error { return atob(&d.Quiescing, v) },
	"WaitingRequests":    func(d *LevelDump, v string) error { return atoi(&d.Waiting, v) },
	"ExecutingRequests":  func(d *LevelDump, v string) error { return atoi(&d.Executing, v) },
	"DispatchedRequests": func(d *LevelDump, v string) error { return atoi(&d.Dispatched, v) },
	"RejectedRequests":   func(d *LevelDump, v string) error { return atoi(&d.Rejected, v) },
	"TimedoutRequests":   func(d *LevelDump, v string) error { return atoi(&d.TimedOut, v) },
	"CancelledRequests":  func(d *LevelDump, v string) error { return atoi(&d.Cancelled, v) },
}

func atoi(dst *int, v string) (err error)  { *dst, err = strconv.Atoi(v); return err }
func atob(dst *bool, v string) (err error) { *dst, err = strconv.ParseBool(v); return err }

// ParseDump reads dump_priority_levels' answer, by priority level name.
func ParseDump(body io.Reader) (map[string]LevelDump, error) {
	counted := &countingReader{r: io.LimitReader(body, maxDumpBytes+1)}
	sc := bufio.NewScanner(counted)
	var header []string
	out := map[string]LevelDump{}
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		fields := strings.Split(line, ",")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if header == nil {
			if fields[0] != "PriorityLevelName" {
				return nil, fmt.Errorf("dump_priority_levels: first line %q is not the header", truncate(line))
			}
			header = fields
			continue
		}
		if len(fields) != len(header) {
			return nil, fmt.Errorf("dump_priority_levels: %d columns in %q, %d in the header", len(fields), truncate(line), len(header))
		}
		var d LevelDump
		for i, h := range header[1:] {
			set, ok := dumpColumns[h]
			if !ok {
				continue // a column this console does not show
			}
			if err := set(&d, fields[i+1]); err != nil {
				return nil, fmt.Errorf("dump_priority_levels: %s of %s: %w", h, fields[0], err)
			}
		}
		out[fields[0]] = d
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read dump_priority_levels: %w", err)
	}
	if counted.n > maxDumpBytes {
		return nil, fmt.Errorf("dump_priority_levels is larger than %d bytes", maxDumpBytes)
	}
	if header == nil {
		return nil, fmt.Errorf("dump_priority_levels is empty")
	}
	return out, nil
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
