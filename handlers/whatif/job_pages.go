package whatif

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/jobs"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// cancelWait is how long Cancel waits for the run to end: the reader
// checks its context between batches.
const cancelWait = 5 * time.Second

// notYours answers a job that is not the user's, gone, or on another
// replica, in the same words for all.
func notYours() error {
	return echo.NewHTTPError(http.StatusNotFound, "There is no such what-if of yours on this console: a result is kept 15 minutes, on the console replica that ran it. Run it again.")
}

// job shows the user's run: its progress while it runs, its result or why
// it stopped once it ended; a backtest started from a priority level's page
// returns there.
func (h *Handlers) job(c echo.Context) error {
	s, ok := h.d.Jobs.Get(c, c.Param("job"))
	if !ok {
		return notYours()
	}
	if lv := s.Progress.form.level; lv != "" && s.State == jobs.Done && s.Result.err == "" {
		back := urls.Object("prioritylevels", lv)
		if page.IsHTMX(c) {
			// The page's script fetched the ended job (web/js/live.js):
			// htmx follows HX-Redirect to the level's page.
			c.Response().Header().Set("HX-Redirect", back)
			return c.NoContent(http.StatusOK)
		}
		return c.Redirect(http.StatusSeeOther, back)
	}
	return h.renderJob(c, s)
}

func (h *Handlers) cancel(c echo.Context) error {
	s, ok := h.d.Jobs.Cancel(c, c.Param("job"), cancelWait)
	if !ok {
		return notYours()
	}
	return h.renderJob(c, s)
}

func (h *Handlers) renderJob(c echo.Context, s jobSnapshot) error {
	p, err := h.newPage(c, s.Progress.form)
	if err != nil {
		return err
	}
	var done bool
	p.Job, p.Error, done = h.d.Jobs.Outcome(s, p.Chrome.Live.URL, p.Chrome.CSRFToken)
	if done {
		p.Result, p.Error = s.Result.result, s.Result.err
	}
	return page.RenderPage(c, http.StatusOK, pages.WhatIf(p), pages.WhatIfOutcome(p))
}
