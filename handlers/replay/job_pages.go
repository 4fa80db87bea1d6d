package replay

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// cancelWait is how long Cancel waits for the job to end, so that its
// answer shows the replay cancelled: the engine checks its context between
// writes, so it ends within a write's evaluation.
const cancelWait = 5 * time.Second

// notYours answers a job that is not the user's, gone, or on another
// replica: the same words for all, so that a job ID tells nobody else
// whether it exists.
func notYours() error {
	return echo.NewHTTPError(http.StatusNotFound, "There is no such replay of yours on this console: a replay's result is kept 15 minutes, on the console replica that ran it. Start the replay again.")
}

// job shows the user's replay job: its progress bar while it runs, its
// result or why it stopped once it ended. htmx gets the outcome alone.
func (h *Handlers) job(c echo.Context) error {
	s, ok := h.d.Jobs.Get(c, c.Param("job"))
	if !ok || s.Progress.form.policy != c.Param("name") {
		return notYours()
	}
	return h.renderJob(c, s)
}

// cancel stops the user's replay job and shows where it stopped.
func (h *Handlers) cancel(c echo.Context) error {
	if s, ok := h.d.Jobs.Get(c, c.Param("job")); !ok || s.Progress.form.policy != c.Param("name") {
		return notYours()
	}
	s, ok := h.d.Jobs.Cancel(c, c.Param("job"), cancelWait)
	if !ok {
		return notYours()
	}
	return h.renderJob(c, s)
}

func (h *Handlers) renderJob(c echo.Context, s jobSnapshot) error {
	f := s.Progress.form
	p, err := h.newPage(c, f.draft, f.window)
	if err != nil {
		return err
	}
	var done bool
	p.Job, p.Error, done = h.d.Jobs.Outcome(s, p.Chrome.Live.URL, p.Chrome.CSRFToken)
	if done {
		p.Result, p.Error = s.Result.result, s.Result.err
	}
	return page.RenderPage(c, http.StatusOK, pages.Replay(p), pages.ReplayOutcome(p))
}
