package present

import (
	"strconv"

	"github.com/clusterdesk/clusterdesk/views/model"
)

// PriorityLevelDumpSection is a priority level's queue set as the API
// server's debug dump (dump_priority_levels) shows it, for its detail page.
// mayRead is the user's right to get that URL: without it the section says
// so, whatever the console itself read.
func PriorityLevelDumpSection(name string, st APFLoadState, mayRead bool, path string) model.Section {
	sec := model.Section{Title: "Queues (API server debug dump, one instance)", TestID: "apf-dump"}
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
	state := "active"
	switch {
	case d.Quiescing:
		state = "quiescing (its configuration is gone; it drains)"
	case d.Idle:
		state = "idle"
	}
	n := strconv.Itoa
	sec.Fields = []model.Field{
		{Label: "Active queues", Value: n(d.ActiveQueues), Hint: "queues holding at least one waiting request"},
		{Label: "State", Value: state},
		{Label: "Waiting", Value: n(d.Waiting)},
		{Label: "Executing", Value: n(d.Executing)},
		{Label: "Dispatched", Value: n(d.Dispatched), Hint: "since the API server made this level's queue set"},
		{Label: "Rejected", Value: n(d.Rejected)},
		{Label: "Timed out", Value: n(d.TimedOut), Hint: "waited in a queue past their deadline"},
		{Label: "Cancelled", Value: n(d.Cancelled), Hint: "the client gave up while the request waited"},
		{Label: "As of", Value: st.Load.At.Format("15:04:05") + ", read with /metrics every " + st.Interval.String()},
	}
	return sec
}
