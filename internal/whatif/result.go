package whatif

import (
	"time"

	"github.com/clusterdesk/clusterdesk/internal/apfsim"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// Result is a what-if run: the window's traffic under the current
// configuration (Current) and, when a draft was given, under it (Draft).
type Result struct {
	Since, Until time.Time
	// Buckets and Requests are what was read; Skipped the requests APF does
	// not hold (long-running ones other than watches).
	Buckets, Requests, Skipped int64
	// Instances are the API server instances the traffic names, sorted;
	// "" stands for traffic whose instance the webhook did not say.
	Instances []string
	Current   Outcome
	Draft     *Outcome
	Flows     []Flow
	// Elapsed is how long the run took.
	Elapsed time.Duration
}

// Outcome is one configuration's simulation, per level.
type Outcome struct {
	Levels []Level
}

// Level is one priority level's predicted outcome, summed over instances,
// with each instance's part.
type Level struct {
	Name   string
	Exempt bool
	// Predicted is the model's; RecordedRequests and RecordedRejected what
	// the API server received and answered 429 of the requests this
	// configuration classifies into the level (the backtest's truth for
	// the current configuration).
	Predicted                          apfsim.Counts
	RecordedRequests, RecordedRejected int64
	// Instances by Result.Instances' order.
	Instances []InstanceLevel
	// Samples is the plot: seats in use, seats waiting and the limit,
	// summed over instances, Result's window in equal steps.
	Samples []apfsim.Sample
	// NominalCL is the nominal limit summed over instances.
	NominalCL int
}

// InstanceLevel is one instance's part of a level.
type InstanceLevel struct {
	Instance            string
	ServerCL, NominalCL int
	Predicted           apfsim.Counts
	RecordedRejected    int64
	RecordedRequests    int64
}

// Flow is one flow's requests (its series over every instance): where each
// configuration puts them and what happens to them.
type Flow struct {
	Series           ledger.TrafficSeries // Instance empty
	Requests         int64
	RecordedRejected int64
	Current          FlowOutcome
	Draft            *FlowOutcome
}

// FlowOutcome is a flow under one configuration.
type FlowOutcome struct {
	FlowSchema, Level string
	Seats             int
	Predicted         apfsim.Counts
}

// Moved tells whether the draft puts the flow in another level.
func (f Flow) Moved() bool { return f.Draft != nil && f.Draft.Level != f.Current.Level }

// Level returns the outcome's level by name.
func (o Outcome) Level(name string) (Level, bool) {
	for _, l := range o.Levels {
		if l.Name == name {
			return l, true
		}
	}
	return Level{}, false
}
