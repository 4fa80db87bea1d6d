package whatif

import (
	"fmt"
	"log/slog"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/jobs"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// A run is a background job with live progress (page.LiveJobs), as the
// policy replay's: the page never waits on it, and web/js/live.js follows
// its events as a replay's.

// progressMax is the progress bar's scale: per mille of the window read.
const progressMax = 1000

// jobForm is what a job's page shows again of the form that started it.
type jobForm struct {
	draft, window, from, to string
	// level, for a backtest started from a priority level's page: where
	// it returns once done.
	level string
}

type jobProgress struct {
	form     jobForm
	fraction float64
}

// jobResult is a run's result, or why it could not run.
type jobResult struct {
	result *model.WhatIfResult
	err    string
}

type jobSnapshot = jobs.Snapshot[jobProgress, jobResult]

// Jobs are the what-ifs running and done on this console process.
type Jobs = page.LiveJobs[jobProgress, jobResult]

// NewJobs returns the what-ifs' registry within lim; pub is nil without live
// updates (a page then reloads to see its job). Its topics have another
// prefix than the replays', so that the two registries' topics never meet.
func NewJobs(pub page.JobPublisher, lim jobs.Limits, log *slog.Logger) *Jobs {
	return page.NewLiveJobs(pub, lim, log, page.JobLook[jobProgress, jobResult]{
		Noun: "what-if", TopicPrefix: "whatif-job-", Bar: jobBar,
		DoneURL: func(s jobSnapshot) string { return urls.WhatIfJob(s.ID) },
	})
}

// jobBar is a running what-if's progress: the share of the window read.
func jobBar(s jobSnapshot) model.ReplayJob {
	f := s.Progress.fraction
	m := model.ReplayJob{URL: urls.WhatIfJob(s.ID), CancelURL: urls.WhatIfCancel(s.ID), Max: progressMax,
		Value: int64(f * progressMax), Label: "Simulating the recorded traffic…", Words: fmt.Sprintf("%.0f%% of the window read", f*100)}
	if f == 0 {
		m.Words = "Starting…"
	}
	return m
}
