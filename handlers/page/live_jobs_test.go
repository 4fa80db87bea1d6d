package page

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/jobs"
	"github.com/clusterdesk/clusterdesk/views/model"
)

func testLiveJobs() *LiveJobs[int, string] {
	return NewLiveJobs[int, string](nil, jobs.Limits{}, nil, JobLook[int, string]{
		Noun: "replay", TopicPrefix: "t-",
		Bar: func(s jobs.Snapshot[int, string]) model.ReplayJob {
			return model.ReplayJob{Max: 10, Value: int64(s.Progress), Words: "3 of 10 read"}
		},
		DoneURL: func(s jobs.Snapshot[int, string]) string { return "/done/" + s.ID },
	})
}

// TestLiveJobsOutcome: a running job is its bar (with the page's live URL
// joined to the job, the token and no result); a cancelled one says how
// far it got, a failed one why, a done one leaves the page its result.
func TestLiveJobsOutcome(t *testing.T) {
	j := testLiveJobs()
	running := jobs.Snapshot[int, string]{ID: "a b", State: jobs.Running, Progress: 3}
	bar, stopped, done := j.Outcome(running, "/events?topics=x", "tok")
	if bar == nil || done || stopped != "" || bar.LiveURL != "/events?topics=x&job=a+b" || bar.CSRFToken != "tok" || bar.Value != 3 {
		t.Fatalf("running: %+v %q %v", bar, stopped, done)
	}
	if bar, _, _ := j.Outcome(running, "/events", ""); bar.LiveURL != "/events?job=a+b" {
		t.Fatalf("live URL without a query: %q", bar.LiveURL)
	}
	if _, stopped, done := j.Outcome(jobs.Snapshot[int, string]{State: jobs.Cancelled}, "", ""); done || stopped != "The replay was cancelled after 3 of 10 read." {
		t.Fatalf("cancelled: %q", stopped)
	}
	if _, stopped, done := j.Outcome(jobs.Snapshot[int, string]{State: jobs.Failed, Err: errors.New("boom")}, "", ""); done || stopped != "The replay failed: boom" {
		t.Fatalf("failed: %q", stopped)
	}
	if bar, stopped, done := j.Outcome(jobs.Snapshot[int, string]{State: jobs.Done}, "", ""); bar != nil || stopped != "" || !done {
		t.Fatal("done: want the result shown")
	}
	var he *echo.HTTPError
	if err := j.NotYours(); !errors.As(err, &he) || he.Code != http.StatusNotFound || !strings.Contains(fmt.Sprint(he.Message), "no such replay of yours") {
		t.Fatalf("not yours: %v", err)
	}
}

// TestLiveJobsStartError: the limits' errors in the feature's words, as
// 429s; anything else a 500 that says why.
func TestLiveJobsStartError(t *testing.T) {
	j := testLiveJobs()
	block := make(chan struct{})
	defer close(block)
	work := func(ctx context.Context, _ func(int)) (string, error) {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return "", nil
	}
	if _, err := j.Start("alice", 0, work); err != nil {
		t.Fatal(err)
	}
	_, err := j.Start("alice", 0, work)
	if words, status := j.StartError(err); status != http.StatusTooManyRequests || !strings.Contains(words, "You have a replay running already") {
		t.Fatalf("%d %q", status, words)
	}
	if words, status := j.StartError(jobs.ErrBusy); status != http.StatusTooManyRequests || !strings.Contains(words, "as many replays as it may") {
		t.Fatalf("%d %q", status, words)
	}
	if words, status := j.StartError(errors.New("disk")); status != http.StatusInternalServerError || words != "The replay could not start: disk" {
		t.Fatalf("%d %q", status, words)
	}
	if words, status := j.StartError(nil); status != http.StatusOK || words != "" {
		t.Fatalf("%d %q", status, words)
	}
}
