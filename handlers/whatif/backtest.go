package whatif

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/internal/whatif"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// backtestFresh is how long a priority level's page shows a backtest.
const backtestFresh = time.Hour

// backtests keep the latest result of a run without a draft per window
// value ("1h", "24h", "range": at most three), each level's numbers only:
// what a priority level's page says of it. Bounded by the windows and the
// levels, whoever runs it.
type backtests struct {
	mu    sync.Mutex
	byWin map[string]backtest
}

type backtest struct {
	at     time.Time
	words  string
	levels map[string]levelBacktest
}

type levelBacktest struct {
	predicted, recorded int64
	perInstance         string
}

func (b *backtests) keep(window, words string, r *whatif.Result) {
	bt := backtest{at: time.Now(), words: words, levels: map[string]levelBacktest{}}
	for _, l := range r.Current.Levels {
		bt.levels[l.Name] = levelBacktest{predicted: l.Predicted.Rejected(), recorded: l.RecordedRejected,
			perInstance: present.WhatIfPerInstance(l)}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byWin == nil {
		b.byWin = map[string]backtest{}
	}
	b.byWin[window] = bt
}

// latest is the newest backtest within backtestFresh that knows level.
func (b *backtests) latest(level string, now time.Time) (backtest, levelBacktest, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var best backtest
	var lb levelBacktest
	found := false
	for _, bt := range b.byWin {
		l, ok := bt.levels[level]
		if ok && now.Sub(bt.at) < backtestFresh && (!found || bt.at.After(best.at)) {
			best, lb, found = bt, l, true
		}
	}
	return best, lb, found
}

// AddBacktest puts the "Backtest" section on a priority level's page: the
// latest backtest's words for the level, and the button that runs one over
// the last day. Only for a user who may list FlowSchemas as well (the
// route checked priority levels): the what-if's own rule. Its link to the
// what-if goes on FlowSchemas' pages too (AddLink).
func (h *Handlers) AddBacktest(c echo.Context, id kube.KindID, name string, p *model.DetailPage) {
	if !h.mayRun(c) {
		return
	}
	p.WhatIfHref = urls.WhatIf
	if id != kube.PriorityLevels || h.d.Traffic == nil {
		return
	}
	sec := model.Section{Title: "Backtest", TestID: "whatif-backtest"}
	if bt, l, ok := h.backtest.latest(name, time.Now()); ok {
		v := fmt.Sprintf("Over %s this model predicted %s rejections; the API server answered %s requests 429", bt.words,
			present.Thousands(l.predicted), present.Thousands(l.recorded))
		if l.perInstance != "" {
			v += " (per instance: " + l.perInstance + ")"
		}
		sec.Fields = append(sec.Fields, model.Field{Label: "Run " + bt.at.UTC().Format(time.DateTime) + " UTC", Value: v + "."})
	} else {
		sec.Fields = append(sec.Fields, model.Field{Label: "Latest", Value: "No backtest was run within the hour."})
	}
	p.Sections = append(p.Sections, sec)
	p.Actions = append(p.Actions, model.Action{Label: "Run the backtest over the last day",
		URL: urls.WhatIfBacktest + "?level=" + name, TestID: "whatif-backtest-run"})
}

// mayRun: the user may list both kinds the what-if reads, and read the
// recorded traffic (Deps.Refusal).
func (h *Handlers) mayRun(c echo.Context) bool {
	if h.d.MayList == nil || h.d.Refusal.Of(c) != "" {
		return false
	}
	for _, id := range []kube.KindID{kube.FlowSchemas, kube.PriorityLevels} {
		k, ok := h.d.Cluster.Kind(id)
		if !ok || !h.d.MayList(c, k) {
			return false
		}
	}
	return true
}

// runBacktest starts the backtest over the last day for a priority level's
// page, which its job's page returns to once done.
func (h *Handlers) runBacktest(c echo.Context) error {
	level := c.QueryParam("level")
	if level == "" || slices.Contains([]string{".", ".."}, level) {
		return echo.NewHTTPError(http.StatusBadRequest, "Which priority level's page to return to is missing.")
	}
	return h.startAndAnswer(c, jobForm{window: "24h", level: level})
}
