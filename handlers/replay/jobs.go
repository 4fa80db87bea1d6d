package replay

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/jobs"
	"github.com/clusterdesk/clusterdesk/internal/present"
	engine "github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// A replay runs as a background job with live progress (page.LiveJobs), so
// that the page never waits on it.

// jobForm is what a job's page shows of the form that started it.
type jobForm struct {
	policy, draft, window string
	since, until          time.Time
}

// jobProgress is how far a job is, with its form.
type jobProgress struct {
	form jobForm
	engine.Progress
}

// jobResult is a job's outcome: the result, or why the draft could not run.
type jobResult struct {
	result *model.ReplayResult
	err    string
}

type jobSnapshot = jobs.Snapshot[jobProgress, jobResult]

// Jobs are the replays running and done on this console process, shared by
// the replay pages and the event stream (JobTopic).
type Jobs = page.LiveJobs[jobProgress, jobResult]

// NewJobs returns the replays' registry within lim; pub is nil without live
// updates (a page then reloads to see its job).
func NewJobs(pub page.JobPublisher, lim jobs.Limits, log *slog.Logger) *Jobs {
	return page.NewLiveJobs(pub, lim, log, page.JobLook[jobProgress, jobResult]{
		Noun: "replay", TopicPrefix: "job-", Bar: jobBar,
		DoneURL: func(s jobSnapshot) string { return urls.PolicyReplayJob(s.Progress.form.policy, s.ID) },
	})
}

// jobBar is a running replay's progress: the writes read of the window's.
func jobBar(s jobSnapshot) model.ReplayJob {
	f := s.Progress.form
	p := s.Progress.Progress
	m := model.ReplayJob{URL: urls.PolicyReplayJob(f.policy, s.ID), CancelURL: urls.PolicyReplayCancel(f.policy, s.ID),
		Max: max(p.Total, 1), Value: min(p.Scanned, p.Total)}
	switch {
	case !p.At.IsZero():
		m.Words = fmt.Sprintf("%s of %s writes read, up to %s UTC", present.Thousands(p.Scanned), present.Thousands(p.Total), p.At.UTC().Format(time.DateTime))
	case p.Total > 0:
		m.Words = fmt.Sprintf("%s writes to read", present.Thousands(p.Total))
	default:
		m.Words = "Starting…"
	}
	return m
}
