package present

import (
	"strconv"
	"strings"

	"github.com/clusterdesk/clusterdesk/internal/apfload"

	"github.com/clusterdesk/clusterdesk/views/model"
)

// PriorityLevelDumpSection is a priority level's queue set as the API
// server's debug dump (dump_priority_levels) shows it, for its detail page.
// mayRead is the user's right to get that URL: without it the section says
// so, whatever the console itself read.
func PriorityLevelDumpSection(name string, st APFLoadState, mayRead bool, path string) model.Section {
	sec := model.Section{Title: "Queues (API server debug dump, one instance)", TestID: "apf-dump"}
	if st.Load != nil && len(st.Load.Instances) > 0 {
		sec.Title = "Queues (API server debug dump, " + strings.TrimPrefix(loadScope(st.Load), "(")
	}
	note := func(label, msg string) model.Section {
		sec.Fields = []model.Field{{Label: label, Value: msg}}
		return sec
	}
	switch {
	case !mayRead:
		return note("Not shown", "Your identity may not read "+path+", so the queues are not shown (Kubernetes RBAC: get on that non-resource URL).")
	case st.Load == nil:
		sec.Follow = st.Follow
		return note(st.LoadBanner().Title, st.LoadBanner().Message)
	case st.Load.DumpErr != nil:
		return note("Unavailable", "clusterdesk could not read the API server's dump: "+st.Load.DumpErr.Error())
	case st.Load.Dump == nil:
		return note("Unavailable", "clusterdesk does not read the API server's dump.")
	}
	d, ok := st.Load.Dump[name]
	if !ok {
		return note("Queues", "the API server's dump has no row for this priority level yet")
	}
	asOf := model.Field{Label: "As of", Value: st.Load.At.Format("15:04:05") + ", read with /metrics every " + st.Interval.String()}
	if perInstance(st.Load) {
		sec.Fields = []model.Field{
			{Label: "State", Value: dumpState(d, true)},
			{Label: "By instance", Value: "each instance's own dump, read at its own address; the last row adds them (each instance has its own queues)"},
			asOf,
		}
		sec.Columns, sec.Rows = dumpColumns, dumpRows(name, st.Load, d)
		return sec
	}
	n := strconv.Itoa
	sec.Fields = []model.Field{
		{Label: "Active queues", Value: n(d.ActiveQueues), Hint: "queues holding at least one waiting request"},
		{Label: "State", Value: dumpState(d, false)},
		{Label: "Waiting", Value: n(d.Waiting)},
		{Label: "Executing", Value: n(d.Executing)},
		{Label: "Dispatched", Value: n(d.Dispatched), Hint: "since the API server made this level's queue set"},
		{Label: "Rejected", Value: n(d.Rejected)},
		{Label: "Timed out", Value: n(d.TimedOut), Hint: "waited in a queue past their deadline"},
		{Label: "Cancelled", Value: n(d.Cancelled), Hint: "the client gave up while the request waited"},
		asOf,
	}
	return sec
}

// dumpState words a level's state; summed is true for the instances' sum
// (idle on every instance, quiescing on one at least).
func dumpState(d apfload.LevelDump, summed bool) string {
	switch {
	case d.Quiescing && summed:
		return "quiescing on some instance (its configuration is gone; it drains)"
	case d.Quiescing:
		return "quiescing (its configuration is gone; it drains)"
	case d.Idle && summed:
		return "idle on every instance"
	case d.Idle:
		return "idle"
	}
	return "active"
}

// dumpColumns are the per-instance table's columns.
var dumpColumns = []string{"Instance", "State", "Active queues", "Waiting", "Executing", "Dispatched", "Rejected", "Timed out", "Cancelled"}

// dumpRows is one row per instance, by name, and the total: an instance that
// did not answer, or whose dump could not be read, says so instead of zeros.
func dumpRows(name string, ld *apfload.Load, total apfload.LevelDump) [][]string {
	n := strconv.Itoa
	counts := func(d apfload.LevelDump) []string {
		return []string{n(d.ActiveQueues), n(d.Waiting), n(d.Executing), n(d.Dispatched), n(d.Rejected), n(d.TimedOut), n(d.Cancelled)}
	}
	blank := make([]string, 7)
	var rows [][]string
	for _, in := range ld.Instances {
		host := instanceHost(in.Name)
		switch {
		case !in.Reachable():
			rows = append(rows, append([]string{host, "did not answer (unknown, not zero)"}, blank...))
		case in.Load.DumpErr != nil:
			rows = append(rows, append([]string{host, "dump not read: " + in.Load.DumpErr.Error()}, blank...))
		default:
			d, ok := in.Load.Dump[name]
			if !ok {
				rows = append(rows, append([]string{host, "no row for this level yet"}, blank...))
				continue
			}
			rows = append(rows, append([]string{host, dumpState(d, false)}, counts(d)...))
		}
	}
	return append(rows, append([]string{"Total", dumpState(total, true)}, counts(total)...))
}
