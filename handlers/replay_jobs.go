package handlers

import (
	replaypage "github.com/clusterdesk/clusterdesk/handlers/replay"
	"github.com/clusterdesk/clusterdesk/internal/jobs"
)

// replayJobsOf is the registry of the replays running in the background
// (handlers/replay), within internal/jobs' default limits (one running
// replay per user, two per process: each keeps a core busy), reporting
// their progress over the live updates when there are any.
func replayJobsOf(deps Deps) *replaypage.Jobs {
	var pub replaypage.Publisher // a nil *LiveUpdates must stay a nil interface
	if deps.Live != nil {
		pub = deps.Live
	}
	return replaypage.NewJobs(pub, jobs.Limits{}, deps.Log)
}
