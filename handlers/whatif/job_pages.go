package whatif

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/jobs"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// job shows the user's run: its progress while it runs, its result or why
// it stopped once it ended; a backtest started from a priority level's page
// returns there.
func (h *Handlers) job(c echo.Context) error {
	s, ok := h.d.Jobs.Get(c, c.Param("job"))
	if !ok {
		return h.d.Jobs.NotYours()
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
	s, ok := h.d.Jobs.Cancel(c, c.Param("job"))
	if !ok {
		return h.d.Jobs.NotYours()
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
