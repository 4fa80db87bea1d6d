package replay

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// job shows the user's replay job: its progress bar while it runs, its
// result or why it stopped once it ended. htmx gets the outcome alone.
func (h *Handlers) job(c echo.Context) error {
	s, ok := h.d.Jobs.Get(c, c.Param("job"))
	if !ok || s.Progress.form.policy != c.Param("name") {
		return h.d.Jobs.NotYours()
	}
	return h.renderJob(c, s)
}

// cancel stops the user's replay job and shows where it stopped.
func (h *Handlers) cancel(c echo.Context) error {
	if s, ok := h.d.Jobs.Get(c, c.Param("job")); !ok || s.Progress.form.policy != c.Param("name") {
		return h.d.Jobs.NotYours()
	}
	s, ok := h.d.Jobs.Cancel(c, c.Param("job"))
	if !ok {
		return h.d.Jobs.NotYours()
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
