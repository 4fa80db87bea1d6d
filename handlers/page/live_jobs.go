package page

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/jobs"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// A feature's long computation (a policy replay, an APF what-if) runs as a
// background job (internal/jobs) with live progress: the POST starts it and
// answers at once with a progress bar, the job publishes its bar on its own
// topic of the page's event stream (handlers/live serves the topic to the
// job's owner only; web/js/live.js swaps the bar in), Cancel stops it, and
// the page fetches the job's URL once the job says it is done. LiveJobs is
// that wiring, once; a feature says only how its bar reads and where its
// finished job is shown (JobLook).

// JobPublisher sends a job's messages to the pages' event streams
// (handlers/live's Updates).
type JobPublisher interface {
	Publish(msgs ...live.Message)
	Forget(topic string)
}

// Event names of a job's topic, read by web/js/live.js: progress replaces
// the progress bar; done (sticky: a stream that joins after the end gets
// it) carries the job's URL, whose page then shows the result.
const (
	JobProgressEvent = "job-progress"
	JobDoneEvent     = "job-done"
)

// JobLook is how a feature's jobs look on its pages.
type JobLook[P, R any] struct {
	// Noun names a job in the page's words and the log ("replay").
	Noun string
	// TopicPrefix starts the live topic of each job: one per feature, so
	// that two registries' topics never meet.
	TopicPrefix string
	// Bar is a running job's progress bar: its URLs, scale, value and
	// words (the live URL, the Cancel button's token and the cancelling
	// state are LiveJobs').
	Bar func(s jobs.Snapshot[P, R]) model.ReplayJob
	// DoneURL is where a finished job is read.
	DoneURL func(s jobs.Snapshot[P, R]) string
}

// LiveJobs are one feature's jobs on this console process, shared by its
// pages and the event stream (JobTopic).
type LiveJobs[P, R any] struct {
	reg  *jobs.Registry[P, R]
	look JobLook[P, R]
	pub  JobPublisher // nil without live updates
	log  *slog.Logger
}

// NewLiveJobs returns a feature's job registry within lim; pub is nil
// without live updates (a page then reloads to see its job).
func NewLiveJobs[P, R any](pub JobPublisher, lim jobs.Limits, log *slog.Logger, look JobLook[P, R]) *LiveJobs[P, R] {
	if log == nil {
		log = slog.Default()
	}
	j := &LiveJobs[P, R]{reg: jobs.New[P, R](lim), look: look, pub: pub, log: log}
	if pub != nil {
		j.reg.OnChange = j.changed
		j.reg.OnDrop = func(id string) { pub.Forget(j.Topic(id)) }
	}
	return j
}

// JobOwner is who a request acts as: the Kubernetes username (as
// live.Streams counts streams per user; in proxy mode every request is a
// session of its own). "" owns nothing: the registry finds no job of nobody.
func JobOwner(c echo.Context) string {
	id, _ := kube.IdentityFrom(c.Request().Context())
	return id.User
}

// Topic is the live topic of job id.
func (j *LiveJobs[P, R]) Topic(id string) string { return j.look.TopicPrefix + id }

// JobTopic is the topic of job id if it is the signed-in user's, for the
// event stream (handlers/live's Deps.JobTopic).
func (j *LiveJobs[P, R]) JobTopic(c echo.Context, id string) (string, bool) {
	_, ok := j.reg.Get(JobOwner(c), id)
	return j.Topic(id), ok
}

// Start runs work as a job of owner (JobOwner of the request; jobs.Registry.Start).
func (j *LiveJobs[P, R]) Start(owner string, first P, work func(ctx context.Context, progress func(P)) (R, error)) (jobs.Snapshot[P, R], error) {
	return j.reg.Start(owner, first, work)
}

// Get is the signed-in user's job id.
func (j *LiveJobs[P, R]) Get(c echo.Context, id string) (jobs.Snapshot[P, R], bool) {
	return j.reg.Get(JobOwner(c), id)
}

// JobCancelWait is how long Cancel waits for a job to end, so that its
// answer shows the job cancelled: the engines check their context between
// items (a write, a batch of traffic), so they end well within it.
const JobCancelWait = 5 * time.Second

// Cancel stops the signed-in user's job id, waiting up to JobCancelWait for
// it to end.
func (j *LiveJobs[P, R]) Cancel(c echo.Context, id string) (jobs.Snapshot[P, R], bool) {
	return j.reg.Cancel(JobOwner(c), id, JobCancelWait)
}

// NotYours answers a job that is not the user's, gone, or on another
// replica: the same words for all, so that a job ID tells nobody else
// whether it exists.
func (j *LiveJobs[P, R]) NotYours() error {
	return echo.NewHTTPError(http.StatusNotFound, "There is no such "+j.look.Noun+" of yours on this console: a "+j.look.Noun+
		"'s result is kept 15 minutes, on the console replica that ran it. Start the "+j.look.Noun+" again.")
}

// changed publishes a job's progress bar while it runs, and its URL once it
// ended.
func (j *LiveJobs[P, R]) changed(_ string, s jobs.Snapshot[P, R]) {
	topic := j.Topic(s.ID)
	if s.State != jobs.Running {
		j.pub.Publish(live.Message{Topic: topic, Event: JobDoneEvent, Sticky: true, Data: []byte(j.look.DoneURL(s))})
		return
	}
	var b bytes.Buffer
	if err := pages.ReplayJobBar(j.Bar(s, "", "")).Render(context.Background(), &b); err != nil {
		j.log.Error("rendering a job's progress", "job", j.look.Noun, "err", err)
		return
	}
	j.pub.Publish(live.Message{Topic: topic, Event: JobProgressEvent, Data: b.Bytes()})
}

// Bar is a running job as its page shows it; liveURL is the page's event
// stream ("" without live updates), csrf the Cancel button's token.
func (j *LiveJobs[P, R]) Bar(s jobs.Snapshot[P, R], liveURL, csrf string) model.ReplayJob {
	m := j.look.Bar(s)
	m.CSRFToken, m.Cancelling = csrf, s.State == jobs.Cancelled
	if liveURL != "" {
		sep := "?"
		if strings.Contains(liveURL, "?") {
			sep = "&"
		}
		m.LiveURL = liveURL + sep + "job=" + url.QueryEscape(s.ID)
	}
	return m
}

// Outcome is what a job's page shows for the job's state: the progress bar
// while it runs, why it stopped when it was cancelled or failed; done
// reports a job that ended with its result, which the page shows.
func (j *LiveJobs[P, R]) Outcome(s jobs.Snapshot[P, R], liveURL, csrf string) (bar *model.ReplayJob, stopped string, done bool) {
	switch s.State {
	case jobs.Running:
		m := j.Bar(s, liveURL, csrf)
		return &m, "", false
	case jobs.Cancelled:
		return nil, "The " + j.look.Noun + " was cancelled after " + j.look.Bar(s).Words + ".", false
	case jobs.Failed:
		return nil, "The " + j.look.Noun + " failed: " + s.Err.Error(), false
	}
	return nil, "", true
}

// StartError is the page's words and status for Start's error err (nil:
// none).
func (j *LiveJobs[P, R]) StartError(err error) (words string, status int) {
	switch {
	case err == nil:
		return "", http.StatusOK
	case errors.Is(err, jobs.ErrOwnerBusy):
		return "You have a " + j.look.Noun + " running already: cancel it, or wait for its result.", http.StatusTooManyRequests
	case errors.Is(err, jobs.ErrBusy):
		return "The console runs as many " + j.look.Noun + "s as it may at once; try again in a minute.", http.StatusTooManyRequests
	}
	return "The " + j.look.Noun + " could not start: " + err.Error(), http.StatusInternalServerError
}
