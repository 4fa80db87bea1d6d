package present

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/apfsim"
	"github.com/clusterdesk/clusterdesk/internal/whatif"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// WhatIfFlowsMax bounds the what-if's table of flows whose predicted
// rejections change most (and of the flows moved): a page of a busy
// cluster's window would otherwise list every user.
const WhatIfFlowsMax = 50

// WhatIfLeftOut is what the APF model leaves out (internal/whatif,
// internal/apfsim), said under every result.
var WhatIfLeftOut = []string{
	"Arrivals within a second are spread evenly over it: the recorded traffic keeps counts per second, not arrival times.",
	"A LIST weighs the seats the API server's work estimator gives it for the resource's stored objects as the live load last read them (a seat per 100 kB, at most 10), taken to be unlimited and unfiltered (the traffic keeps no list options); every other request one seat: no extra seats for the watch notifications of writes.",
	"Exempt and long-running traffic (exec, logs, port-forward) is not held by APF and not simulated.",
	"A watch's initialisation is counted as the watch's latency until ResponseStarted.",
	"A request's service time is estimated: the fastest served request of a second with 429s, the mean served latency otherwise.",
	"Clients that retry or slow down on 429 would send differently under another configuration: the replay keeps the recorded arrivals.",
	"The minute before the window is simulated first and not counted, so that a window opening in a storm starts with its queues and seats as the storm left them; a storm older than that minute is not seen.",
	"The instances are those the audit webhook's path names; traffic that names no instance is simulated as one server.",
}

// WhatIfResult is r as the what-if page shows it; window says which window
// it was ("the last hour"), serverCL which limit each instance ran with.
func WhatIfResult(r *whatif.Result, window string, serverCL []string) *model.WhatIfResult {
	m := &model.WhatIfResult{
		Window:   fmt.Sprintf("%s (%s to %s UTC)", window, r.Since.UTC().Format(time.DateTime), r.Until.UTC().Format(time.DateTime)),
		Requests: Thousands(r.Requests), Skipped: Thousands(r.Skipped),
		Elapsed: r.Elapsed.Round(time.Millisecond).String(), ServerCL: serverCL,
		HasDraft: r.Draft != nil, LeftOut: WhatIfLeftOut,
	}
	var names []string
	for _, in := range r.Instances {
		names = append(names, instanceName(in))
	}
	m.Instances = fmt.Sprintf("%d (%s)", len(r.Instances), strings.Join(names, ", "))
	if len(r.Instances) > 1 {
		m.LevelsSummed = fmt.Sprintf("Seats, counts and plots are summed over the %d API server instances: each runs its own limits and queues; the per-instance numbers follow each level.", len(r.Instances))
	}
	if len(r.Instances) == 0 {
		m.Instances = "none: no traffic was recorded in the window"
	}
	m.Levels = whatIfLevels(r)
	m.Moved, m.Changed, m.ChangedLeftOut = whatIfFlows(r)
	return m
}

func instanceName(in string) string {
	if in == "" {
		return "an unnamed instance"
	}
	return in
}

// whatIfLevels are the levels with traffic under either configuration, or
// that the draft changes, by name; each plotted when the draft changes
// what it predicts (every level with traffic for a backtest).
func whatIfLevels(r *whatif.Result) []model.WhatIfLevel {
	names := map[string]bool{}
	for _, l := range r.Current.Levels {
		names[l.Name] = true
	}
	if r.Draft != nil {
		for _, l := range r.Draft.Levels {
			names[l.Name] = true
		}
	}
	var out []model.WhatIfLevel
	for _, name := range slices.Sorted(maps.Keys(names)) {
		cur, hasCur := r.Current.Level(name)
		var dr whatif.Level
		hasDraft := false
		if r.Draft != nil {
			dr, hasDraft = r.Draft.Level(name)
		}
		traffic := cur.Predicted.Arrived > 0 || cur.RecordedRequests > 0 || dr.Predicted.Arrived > 0
		// A level without traffic is left out even when the draft's shares
		// change its seats: adding a level takes a few from every other.
		changed := r.Draft != nil && (hasCur != hasDraft || cur.Predicted != dr.Predicted || cur.NominalCL != dr.NominalCL)
		if !traffic && (r.Draft == nil || hasCur == hasDraft) {
			continue
		}
		l := model.WhatIfLevel{Name: name}
		if hasCur {
			l.Before = whatIfNumbers(cur)
			l.Recorded = recordedWords(cur)
		}
		if hasDraft {
			l.After = whatIfNumbers(dr)
		}
		if (changed || r.Draft == nil) && traffic && !cur.Exempt {
			var before, after []apfsim.Sample
			if hasCur {
				before = cur.Samples
			}
			if hasDraft {
				after = dr.Samples
			}
			l.Plot = WhatIfPlot("plot-"+name, name, r.Since, r.Until, before, after)
		}
		out = append(out, l)
	}
	return out
}

func whatIfNumbers(l whatif.Level) *model.WhatIfNumbers {
	p := l.Predicted
	n := &model.WhatIfNumbers{
		Nominal: Thousands(int64(l.NominalCL)), Arrived: Thousands(p.Arrived), Dispatched: Thousands(p.Dispatched),
		Queued: Thousands(p.Queued), MeanWait: "none",
		QueueFull: Thousands(p.QueueFull), ConcurrencyLimit: Thousands(p.ConcurrencyLimit), TimeOut: Thousands(p.TimeOut),
		Rejected: Thousands(p.Rejected()),
	}
	if l.Exempt {
		n.Nominal = "exempt"
	}
	if p.Queued > 0 {
		n.MeanWait = (p.WaitSum / time.Duration(p.Queued)).Round(time.Millisecond).String()
	}
	return n
}

// recordedWords is what the API server answered the level's requests,
// per instance when there are several.
func recordedWords(l whatif.Level) string {
	s := fmt.Sprintf("%s of %s answered 429", Thousands(l.RecordedRejected), Thousands(l.RecordedRequests))
	if len(l.Instances) > 1 {
		s += " (" + WhatIfPerInstance(l) + ")"
	}
	return s
}

// WhatIfPerInstance is each instance's predicted rejections and recorded
// 429s of the level: "10.0.0.1:6443 predicted 12, answered 10; …".
func WhatIfPerInstance(l whatif.Level) string {
	var parts []string
	for _, in := range l.Instances {
		parts = append(parts, fmt.Sprintf("%s predicted %s, answered %s", instanceName(in.Instance),
			Thousands(in.Predicted.Rejected()), Thousands(in.RecordedRejected)))
	}
	return strings.Join(parts, "; ")
}

// whatIfFlows are the flows the draft moves and the flows whose predicted
// rejections change most (a backtest: the flows it predicts most
// rejections for), each at most WhatIfFlowsMax.
func whatIfFlows(r *whatif.Result) (moved, changed []model.WhatIfFlow, leftOut string) {
	type scored struct {
		f     whatif.Flow
		delta int64
	}
	var mv, ch []scored
	for _, f := range r.Flows {
		cur := f.Current.Predicted.Rejected()
		d := cur
		if f.Draft != nil {
			d = f.Draft.Predicted.Rejected() - cur
		}
		if f.Moved() {
			mv = append(mv, scored{f, f.Requests})
		}
		if d != 0 {
			ch = append(ch, scored{f, d})
		}
	}
	byScore := func(a, b scored) int {
		if c := cmp.Compare(abs64(b.delta), abs64(a.delta)); c != 0 {
			return c
		}
		return cmp.Compare(flowWho(a.f)+flowWhat(a.f), flowWho(b.f)+flowWhat(b.f))
	}
	slices.SortFunc(mv, byScore)
	slices.SortFunc(ch, byScore)
	if len(ch) > WhatIfFlowsMax {
		leftOut = fmt.Sprintf("%s more flows change less, not shown.", Thousands(int64(len(ch)-WhatIfFlowsMax)))
		ch = ch[:WhatIfFlowsMax]
	}
	mv = mv[:min(len(mv), WhatIfFlowsMax)]
	for _, s := range mv {
		moved = append(moved, whatIfFlow(s.f))
	}
	for _, s := range ch {
		changed = append(changed, whatIfFlow(s.f))
	}
	return moved, changed, leftOut
}

func whatIfFlow(f whatif.Flow) model.WhatIfFlow {
	m := model.WhatIfFlow{Who: flowWho(f), What: flowWhat(f),
		FlowSchemaBefore: f.Current.FlowSchema, LevelBefore: f.Current.Level,
		Requests: Thousands(f.Requests), Recorded429: Thousands(f.RecordedRejected),
		RejectedBefore: Thousands(f.Current.Predicted.Rejected())}
	if f.Draft != nil {
		m.FlowSchemaAfter, m.LevelAfter = f.Draft.FlowSchema, f.Draft.Level
		m.RejectedAfter = Thousands(f.Draft.Predicted.Rejected())
		m.Change = signed(f.Draft.Predicted.Rejected() - f.Current.Predicted.Rejected())
	} else {
		m.Change = signed(f.Current.Predicted.Rejected() - f.RecordedRejected)
	}
	return m
}

func flowWho(f whatif.Flow) string { return f.Series.User }

// flowWhat is the flow's requests in a few words: "create configmaps in x".
func flowWhat(f whatif.Flow) string {
	s := f.Series
	if s.Resource == "" {
		return s.Verb + " " + s.NonResourceURL
	}
	res := s.Resource
	if s.Subresource != "" {
		res += "/" + s.Subresource
	}
	if s.APIGroup != "" {
		res += "." + s.APIGroup
	}
	w := s.Verb + " " + res
	if s.Namespace != "" {
		w += " in " + s.Namespace
	}
	return w
}

func signed(n int64) string {
	if n > 0 {
		return "+" + Thousands(n)
	}
	if n < 0 {
		return "−" + Thousands(-n)
	}
	return "0"
}

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
