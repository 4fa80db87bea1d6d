package replay

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/jobs"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/present"
	engine "github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// A replay runs as a background job (internal/jobs), so that the page never
// waits on it: the POST starts it and answers at once with a progress bar,
// the job reports its progress to the page over the page's event stream
// (handlers/live serves the job's topic to its owner only), Cancel stops
// it, and the page fetches the result when the job says it is done.

// Publisher sends a job's messages to the pages' event streams
// (handlers/live's Updates).
type Publisher interface {
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
type Jobs struct {
	reg *jobs.Registry[jobProgress, jobResult]
	pub Publisher // nil without live updates
	log *slog.Logger
}

// NewJobs returns the replays' registry within lim; pub is nil without live
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

// jobTopic is the live topic of job id.
func jobTopic(id string) string { return "job-" + id }

// owner is who a request acts as: the Kubernetes username (as live.Streams
// counts streams per user; in proxy mode every request is a session of its
// own). "" owns nothing: the registry finds no job of nobody.
func owner(c echo.Context) string {
	id, _ := kube.IdentityFrom(c.Request().Context())
	return id.User
}

// JobTopic is the topic of job id if it is the signed-in user's, for the
// event stream (handlers/live's Deps.JobTopic).
func (j *Jobs) JobTopic(c echo.Context, id string) (string, bool) {
	_, ok := j.reg.Get(owner(c), id)
	return jobTopic(id), ok
}

// changed publishes a job's progress bar while it runs, and its URL once it
// ended.
func (j *Jobs) changed(_ string, s jobSnapshot) {
	topic := jobTopic(s.ID)
	if s.State != jobs.Running {
		j.pub.Publish(live.Message{Topic: topic, Event: JobDoneEvent, Sticky: true,
			Data: []byte(urls.PolicyReplayJob(s.Progress.form.policy, s.ID))})
		return
	}
	var b bytes.Buffer
	if err := pages.ReplayJobBar(jobModel(s, "", "")).Render(context.Background(), &b); err != nil {
		j.log.Error("replay: rendering a job's progress", "err", err)
		return
	}
	j.pub.Publish(live.Message{Topic: topic, Event: JobProgressEvent, Data: b.Bytes()})
}

// jobModel is a running job as its page shows it; liveURL is the page's
// event stream ("" without live updates), csrf the Cancel button's token.
func jobModel(s jobSnapshot, liveURL, csrf string) model.ReplayJob {
	f := s.Progress.form
	p := s.Progress.Progress
	m := model.ReplayJob{URL: urls.PolicyReplayJob(f.policy, s.ID), CancelURL: urls.PolicyReplayCancel(f.policy, s.ID),
		Max: max(p.Total, 1), Value: min(p.Scanned, p.Total), CSRFToken: csrf, Cancelling: s.State == jobs.Cancelled}
	if liveURL != "" {
		sep := "?"
		if strings.Contains(liveURL, "?") {
			sep = "&"
		}
		m.LiveURL = liveURL + sep + "job=" + url.QueryEscape(s.ID)
	}
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
