package handlers

import (
	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	replaypage "github.com/clusterdesk/clusterdesk/handlers/replay"
	whatifpage "github.com/clusterdesk/clusterdesk/handlers/whatif"
	"github.com/clusterdesk/clusterdesk/internal/jobs"
)

// replayJobsOf is the registry of the replays running in the background
// (handlers/replay), within internal/jobs' default limits (one running
// replay per user, two per process: each keeps a core busy), reporting
// their progress over the live updates when there are any.
func replayJobsOf(deps Deps) *replaypage.Jobs {
	var pub page.JobPublisher // a nil *LiveUpdates must stay a nil interface
	if deps.Live != nil {
		pub = deps.Live
	}
	return replaypage.NewJobs(pub, jobs.Limits{}, deps.Log)
}

// whatIfJobsOf is the registry of the APF what-ifs (handlers/whatif),
// within the same default limits: each run keeps up to two cores busy (a
// goroutine per configuration), one per user.
func whatIfJobsOf(deps Deps) *whatifpage.Jobs {
	var pub page.JobPublisher // a nil *LiveUpdates must stay a nil interface
	if deps.Live != nil {
		pub = deps.Live
	}
	return whatifpage.NewJobs(pub, jobs.Limits{}, deps.Log)
}

// jobTopic is the event stream's topic of the user's background job, a
// replay's or a what-if's (handlers/live, Deps.JobTopic).
func (h *Handlers) jobTopic(c echo.Context, id string) (string, bool) {
	if topic, ok := h.replayJobs.JobTopic(c, id); ok {
		return topic, true
	}
	return h.whatIfJobs.JobTopic(c, id)
}
