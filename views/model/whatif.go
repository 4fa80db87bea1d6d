package model

// WhatIfPage is the APF what-if (handlers/whatif, issue 46): a draft of
// FlowSchemas and priority levels, the window of recorded traffic, and the
// outcome of the last run: its progress while it runs, then its result or
// why it could not run.
type WhatIfPage struct {
	Chrome  Chrome
	Action  string
	Draft   string
	Windows []Option
	// From and To are the custom window's bounds (datetime-local, UTC);
	// Oldest is the oldest recorded traffic's time, in words.
	From, To, Oldest string
	// Incidents are the recorded runs of minutes with 429s, newest first:
	// each a button that runs the draft over its window.
	Incidents []WhatIfIncident
	Job       *ReplayJob
	Error     string
	Result    *WhatIfResult
}

// WhatIfResult is a what-if run as the page shows it.
type WhatIfResult struct {
	// Window, Requests, Instances and Elapsed are the summary's words.
	Window, Requests, Skipped, Instances, Elapsed string
	// ServerCL says, per instance, which total concurrency limit the run
	// used and where it came from.
	ServerCL []string
	HasDraft bool
	// LevelsSummed says the levels' seats and counts are summed over the
	// instances (empty with one).
	LevelsSummed string
	// Levels are every level with traffic or changed by the draft.
	Levels []WhatIfLevel
	// Moved are the flows the draft puts in another level; Changed the
	// flows with the largest change of predicted rejections (at most
	// ChangedMax, the rest counted in ChangedLeftOut).
	Moved          []WhatIfFlow
	Changed        []WhatIfFlow
	ChangedLeftOut string
	// Notes say what else the reader should know (FlowSchemas the API
	// server ignores).
	Notes []string
	// LeftOut is the fixed list of what the model leaves out.
	LeftOut []string
}

// WhatIfLevel is one priority level before (the current configuration) and
// after (the draft; nil without one, or when the draft has no such level).
type WhatIfLevel struct {
	Name          string
	Before, After *WhatIfNumbers
	// Recorded is what the API server answered the requests the current
	// configuration puts here: "1,200 of 4,000 answered 429 (…)".
	Recorded string
	// Plot is the seats over time, before and after, when the draft changes
	// the level (or for the backtest, every level with traffic).
	Plot *WhatIfPlot
}

// WhatIfNumbers are one configuration's prediction for a level.
type WhatIfNumbers struct {
	Nominal, Arrived, Dispatched, Queued, MeanWait string
	QueueFull, ConcurrencyLimit, TimeOut, Rejected string
}

// WhatIfPlot is a server-rendered SVG of a level's seats over the window:
// the coordinates are computed (internal/present), the template only draws.
type WhatIfPlot struct {
	ID          string // unique on the page: the title's and desc's ids
	Title, Desc string
	Width       int
	Height      int
	// Plot area.
	Left, Top, Right, Bottom int
	// Polyline points ("x,y x,y …") of each series; "" when absent.
	BeforeSeats, BeforeLimit, AfterSeats, AfterLimit string
	XTicks, YTicks                                   []PlotTick
	XLabel, YLabel                                   string
}

// PlotTick is an axis tick: its position and label.
type PlotTick struct {
	At    int
	Label string
}

// WhatIfFlow is one flow (a user's requests of one kind) under both
// configurations.
type WhatIfFlow struct {
	Who, What                             string
	FlowSchemaBefore, LevelBefore         string
	FlowSchemaAfter, LevelAfter           string
	Requests, Recorded429                 string
	RejectedBefore, RejectedAfter, Change string
}

// WhatIfIncident is one recorded incident: its words and the incident
// button's value (from/to, datetime-local).
type WhatIfIncident struct {
	Label, Value string
}
