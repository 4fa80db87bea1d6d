package whatif

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/jobs"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// A run is a background job (internal/jobs), as the policy replay's
// (handlers/replay, jobs.go): the POST starts it and answers at once with a
// progress bar, the job reports its progress over the page's event stream
// (handlers/live serves the job's topic to its owner only; web/js/live.js
// follows the same events as a replay's), Cancel stops it.

// Publisher sends a job's messages to the pages' event streams.
type Publisher interface {
	Publish(msgs ...live.Message)
	Forget(topic string)
}

// Event names of a job's topic, the replay's (web/js/live.js reads them).
const (
	jobProgressEvent = "job-progress"
	jobDoneEvent     = "job-done"
)

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
type Jobs struct {
	reg *jobs.Registry[jobProgress, jobResult]
	pub Publisher
	log *slog.Logger
}

// NewJobs returns the what-ifs' registry within lim; pub is nil without live
// updates (a page then reloads to see its job).
func NewJobs(pub Publisher, lim jobs.Limits, log *slog.Logger) *Jobs {
	if log == nil {
		log = slog.Default()
	}
	j := &Jobs{reg: jobs.New[jobProgress, jobResult](lim), pub: pub, log: log}
	if pub != nil {
		j.reg.OnChange = j.changed
		j.reg.OnDrop = func(id string) { pub.Forget(jobTopic(id)) }
	}
	return j
}

// jobTopic is the live topic of job id: another prefix than a replay's,
// so that the two registries' topics never meet.
func jobTopic(id string) string { return "whatif-job-" + id }

// owner is who a request acts as (the replay's rule): "" owns nothing.
func owner(c echo.Context) string {
	id, _ := kube.IdentityFrom(c.Request().Context())
	return id.User
}

// JobTopic is the topic of job id if it is the signed-in user's, for the
// event stream.
func (j *Jobs) JobTopic(c echo.Context, id string) (string, bool) {
	_, ok := j.reg.Get(owner(c), id)
	return jobTopic(id), ok
}

func (j *Jobs) changed(_ string, s jobSnapshot) {
	topic := jobTopic(s.ID)
	if s.State != jobs.Running {
		j.pub.Publish(live.Message{Topic: topic, Event: jobDoneEvent, Sticky: true, Data: []byte(urls.WhatIfJob(s.ID))})
		return
	}
	var b bytes.Buffer
	if err := pages.ReplayJobBar(jobModel(s, "", "")).Render(context.Background(), &b); err != nil {
		j.log.Error("whatif: rendering a job's progress", "err", err)
		return
	}
	j.pub.Publish(live.Message{Topic: topic, Event: jobProgressEvent, Data: b.Bytes()})
}

// jobModel is a running job as its page shows it (the replay's bar).
func jobModel(s jobSnapshot, liveURL, csrf string) model.ReplayJob {
	f := s.Progress.fraction
	m := model.ReplayJob{URL: urls.WhatIfJob(s.ID), CancelURL: urls.WhatIfCancel(s.ID), Max: progressMax,
		Value: int64(f * progressMax), CSRFToken: csrf, Cancelling: s.State == jobs.Cancelled,
		Label: "Simulating the recorded traffic…", Words: fmt.Sprintf("%.0f%% of the window read", f*100)}
	if f == 0 {
		m.Words = "Starting…"
	}
	if liveURL != "" {
		sep := "?"
		if strings.Contains(liveURL, "?") {
			sep = "&"
		}
		m.LiveURL = liveURL + sep + "job=" + url.QueryEscape(s.ID)
	}
	return m
}
