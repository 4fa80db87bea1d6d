package replay

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/jobs"
	"github.com/clusterdesk/clusterdesk/internal/live"
	engine "github.com/clusterdesk/clusterdesk/internal/replay"
	"github.com/clusterdesk/clusterdesk/internal/testwait"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// publisher records what a job publishes; ended gets the sticky message.
type publisher struct {
	mu    sync.Mutex
	msgs  []live.Message
	ended chan live.Message
}

func (p *publisher) Publish(msgs ...live.Message) {
	p.mu.Lock()
	p.msgs = append(p.msgs, msgs...)
	p.mu.Unlock()
	for _, m := range msgs {
		if m.Sticky {
			p.ended <- m
		}
	}
}

func (p *publisher) Forget(string) {}

// TestAJobPublishesItsProgressThenItsEnd: each progress report is the
// progress bar, rendered for the job's topic; the end is sticky (a stream
// that joins later still gets it) and names the job's page.
func TestAJobPublishesItsProgressThenItsEnd(t *testing.T) {
	pub := &publisher{ended: make(chan live.Message, 1)}
	j := NewJobs(pub, jobs.Limits{}, nil)
	since := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	form := jobForm{policy: "p", since: since, until: since.Add(time.Hour)}
	s, err := j.Start("alice", jobProgress{form: form}, func(_ context.Context, progress func(jobProgress)) (jobResult, error) {
		// The window's writes crowd its last minutes: the bar measures writes, not time.
		progress(jobProgress{form: form, Progress: engine.Progress{Scanned: 1000, Total: 4000, At: since.Add(58 * time.Minute)}})
		return jobResult{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	end := testwait.Recv(t, pub.ended, 10*time.Second, "the job's end")
	if end.Topic != j.Topic(s.ID) || end.Event != page.JobDoneEvent || string(end.Data) != urls.PolicyReplayJob("p", s.ID) {
		t.Fatalf("end %+v", end)
	}
	pub.mu.Lock()
	defer pub.mu.Unlock()
	if len(pub.msgs) != 2 {
		t.Fatalf("%d messages, want the progress and the end", len(pub.msgs))
	}
	bar := pub.msgs[0]
	if html := string(bar.Data); bar.Topic != j.Topic(s.ID) || bar.Event != page.JobProgressEvent || bar.Sticky ||
		!strings.Contains(html, `id="replay-job-bar"`) || !strings.Contains(html, `max="4000" value="1000"`) ||
		!strings.Contains(html, "1,000 of 4,000 writes read") || strings.Contains(html, "_csrf") {
		t.Fatalf("progress message %+v: %s", bar, bar.Data)
	}
}
