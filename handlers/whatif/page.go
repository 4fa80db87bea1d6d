package whatif

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/internal/apf"
	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/internal/whatif"
	"github.com/clusterdesk/clusterdesk/views/model"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// noTraffic is what the page says when the console records no traffic.
const noTraffic = "This console records no traffic (it runs without a ledger, or the API server's audit webhook is not configured), so there is nothing to simulate."

// newPage is the page with the form's values.
func (h *Handlers) newPage(c echo.Context, f jobForm) (model.WhatIfPage, error) {
	kind, ok := h.d.Cluster.Kind(kube.PriorityLevels)
	if !ok {
		return model.WhatIfPage{}, echo.NewHTTPError(http.StatusNotFound, "clusterdesk does not show priority levels.")
	}
	p := model.WhatIfPage{
		Chrome: h.d.Chrome(c, "What if: APF on recorded traffic", kind.ID,
			model.Crumb{Label: kind.Title, Href: urls.List(kind.ID)}, model.Crumb{Label: "What if"}),
		Action: urls.WhatIf, Draft: f.draft, Windows: windowOptions(f.window), From: f.from, To: f.to,
	}
	if h.d.Traffic == nil {
		p.Error = noTraffic
		return p, nil
	}
	if st, err := h.d.Traffic.TrafficStats(c.Request().Context()); err == nil && !st.Oldest.IsZero() {
		p.Oldest = fmt.Sprintf("Traffic is recorded from %s UTC", st.Oldest.UTC().Format(time.DateTime))
		if st.Retention > 0 {
			p.Oldest += " and kept " + retentionWords(st.Retention)
		}
		p.Oldest += "."
		p.Incidents = h.incidents(c.Request().Context(), st.Oldest)
	}
	return p, nil
}

// maxIncidents is how many recorded incidents the form offers.
const maxIncidents = 8

// incidents are the newest runs of minutes with 429s since oldest, as the
// form's buttons: each runs the draft over its window (a minute either
// side, so the run sees it begin and end). A failure to read them leaves
// them out: the form works without.
func (h *Handlers) incidents(ctx context.Context, oldest time.Time) []model.WhatIfIncident {
	minutes, err := h.d.Traffic.TrafficRejections(ctx, oldest)
	if err != nil {
		return nil
	}
	now := time.Now().UTC()
	var out []model.WhatIfIncident
	for _, in := range whatif.Incidents(minutes, maxIncidents) {
		from, to := in.Start.Add(-time.Minute), in.End.Add(time.Minute)
		if to.After(now) { // a window may not end in the future
			to = now.Truncate(time.Minute)
		}
		out = append(out, model.WhatIfIncident{
			Label: fmt.Sprintf("%s–%s UTC: %s answered 429", in.Start.Format("Jan 2 15:04"), in.End.Format("15:04"), present.Thousands(in.Rejected)),
			Value: from.Format(dateTimeLocal) + "/" + to.Format(dateTimeLocal),
		})
	}
	return out
}

// form shows the form; ?draft= is not read (a draft comes by POST).
func (h *Handlers) form(c echo.Context) error {
	p, err := h.newPage(c, jobForm{})
	if err != nil {
		return err
	}
	return page.Render(c, http.StatusOK, pages.WhatIf(p))
}

// run checks the draft and starts the run as the user's background job;
// a draft that cannot run is said beside the form and runs nothing.
func (h *Handlers) run(c echo.Context) error {
	if err := page.ParseForm(c); err != nil {
		return err
	}
	v := c.Request().Form
	f := jobForm{draft: v.Get("draft"), window: v.Get("window"), from: v.Get("from"), to: v.Get("to")}
	if from, to, ok := strings.Cut(v.Get("incident"), "/"); ok {
		// One of the recorded incidents' buttons: its window, the draft
		// as typed.
		f.window, f.from, f.to = "range", from, to
	}
	if _, fromForm := v["draft"]; !fromForm {
		// The YAML editor's "Simulate on recorded traffic" posts its own
		// form, the text as yaml (handlers/editor, replay.go).
		f.draft = v.Get("yaml")
	}
	return h.startAndAnswer(c, f)
}

// startAndAnswer starts f's run and answers: htmx gets the outcome with the
// job's progress bar, a plain POST is sent to the job's page.
func (h *Handlers) startAndAnswer(c echo.Context, f jobForm) error {
	p, err := h.newPage(c, f)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if p.Error == "" {
		var s jobSnapshot
		if s, p.Error, status = h.start(c, f); p.Error == "" {
			if !page.IsHTMX(c) {
				return c.Redirect(http.StatusSeeOther, urls.WhatIfJob(s.ID))
			}
			job := h.d.Jobs.Bar(s, p.Chrome.Live.URL, p.Chrome.CSRFToken)
			p.Job = &job
		}
	}
	if status != http.StatusOK && page.IsHTMX(c) {
		status = http.StatusOK // htmx swaps no error response: the fragment says it
	}
	return page.RenderPage(c, status, pages.WhatIf(p), pages.WhatIfOutcome(p))
}

// start checks f and starts its run: the draft parsed, each object
// dry-run as the user, the whole configuration checked by whatif.CheckDraft,
// all before the job; their failure is the error's words and status.
func (h *Handlers) start(c echo.Context, f jobForm) (jobSnapshot, string, int) {
	ctx := c.Request().Context()
	since, until, words, err := h.window(ctx, f)
	if err != nil {
		return jobSnapshot{}, err.Error(), http.StatusUnprocessableEntity
	}
	draftObjs, objs, err := parseDraft(f.draft)
	if err != nil {
		return jobSnapshot{}, err.Error(), http.StatusUnprocessableEntity
	}
	all, err := h.current()
	if err != nil {
		return jobSnapshot{}, err.Error(), http.StatusServiceUnavailable
	}
	cur, notes := inForce(all)
	in := whatif.Input{Traffic: h.d.Traffic, Since: since, Until: until, Current: cur}
	if len(objs) > 0 {
		if h.d.Editor == nil {
			return jobSnapshot{}, "This console cannot check a draft with the API server (it has no editor), so it runs none.", http.StatusServiceUnavailable
		}
		if err := dryRun(ctx, h.d.Editor, h.d.Cluster, objs); err != nil {
			return jobSnapshot{}, "The draft: " + err.Error(), http.StatusUnprocessableEntity
		}
		d := whatif.Overlay(cur, draftObjs)
		if err := whatif.CheckDraft(cur, d); err != nil {
			return jobSnapshot{}, "The draft: " + err.Error(), http.StatusUnprocessableEntity
		}
		in.Draft = &d
	}
	inferred := h.inferServerCL(ctx, cur)
	in.ServerCL = func(inst string) int { return inferred[inst] }
	in.Objects = h.storedObjects()
	s, err := h.d.Jobs.Start(page.JobOwner(c), jobProgress{form: f}, func(ctx context.Context, progress func(jobProgress)) (jobResult, error) {
		ctx, cancel := context.WithTimeout(ctx, h.d.Timeout)
		defer cancel()
		in.Progress = func(fr float64) { progress(jobProgress{form: f, fraction: fr}) }
		res, err := whatif.Run(ctx, in)
		switch {
		case errors.Is(err, context.Canceled):
			return jobResult{}, err
		case errors.Is(err, context.DeadlineExceeded):
			return jobResult{err: "The run took longer than " + h.d.Timeout.String() + " and was stopped; choose a shorter window."}, nil
		case err != nil:
			return jobResult{err: err.Error()}, nil
		}
		if in.Draft == nil {
			h.backtest.keep(f.window, words, res)
		}
		m := present.WhatIfResult(res, words, serverCLWords(res.Instances, inferred))
		m.Notes = notes
		return jobResult{result: m}, nil
	})
	// Not into a variable the job's closure reads (the window's words):
	// the job runs on after this returns.
	refusal, status := h.d.Jobs.StartError(err)
	return s, refusal, status
}

// current is the configuration in force, from the shared cache (the
// routes' access checks let only users who may list both kinds here).
func (h *Handlers) current() (whatif.Config, error) {
	fss, err := h.d.Cluster.FlowSchemas()
	if err != nil {
		return whatif.Config{}, fmt.Errorf("the FlowSchemas could not be read: %v", err)
	}
	pls, err := h.d.Cluster.PriorityLevels()
	if err != nil {
		return whatif.Config{}, fmt.Errorf("the priority levels could not be read: %v", err)
	}
	return whatif.Config{FlowSchemas: fss, Levels: pls}, nil
}

// inForce is c as the API server applies it: a FlowSchema whose priority
// level does not exist is ignored (k8s.io/apiserver
// pkg/util/flowcontrol/apf_controller.go, digestConfigObjects: "Ignoring
// FlowSchema … because of bad priority level reference"), not an error of
// the configuration; ignored names them.
func inForce(c whatif.Config) (out whatif.Config, ignored []string) {
	levels := apf.LevelsOf(c.Levels)
	out.Levels = c.Levels
	for _, fs := range c.FlowSchemas {
		if _, ok := levels.Level(fs.Spec.PriorityLevelConfiguration.Name); ok {
			out.FlowSchemas = append(out.FlowSchemas, fs)
		} else {
			ignored = append(ignored, fmt.Sprintf("The FlowSchema %s names the priority level %q, which does not exist: the API server ignores it, and so does the simulation of the current configuration.",
				fs.Name, fs.Spec.PriorityLevelConfiguration.Name))
		}
	}
	return out, ignored
}

// inferServerCL is each instance's limit the live load tells (servercl.go).
func (h *Handlers) inferServerCL(ctx context.Context, cur whatif.Config) map[string]int {
	if h.d.APFLoad == nil {
		return nil
	}
	ld, err := h.d.APFLoad.Look()
	if err != nil {
		return nil
	}
	return serverCLs(&ld, cur.Levels)
}

// storedObjects is the resources' stored objects as the live load last
// read them (a LIST's seats, whatif.Input.Objects); nil without a load.
func (h *Handlers) storedObjects() func(group, resource string) (int64, int64, bool) {
	if h.d.APFLoad == nil {
		return nil
	}
	ld, err := h.d.APFLoad.Look()
	if err != nil || len(ld.Resources) == 0 {
		return nil
	}
	return func(group, resource string) (int64, int64, bool) {
		st, ok := ld.Resources[apfload.ResourceKey(group, resource)]
		return st.Objects, st.Bytes, ok
	}
}

// windows are the what-if's windows, the default first.
var windows = []struct {
	value, label, words string
	d                   time.Duration
}{
	{"1h", "last hour", "the last hour", time.Hour},
	{"24h", "last day", "the last day", 24 * time.Hour},
	{"range", "from–to (below)", "", 0},
}

func windowOptions(window string) []model.Option {
	var opts []model.Option
	found := false
	for _, w := range windows {
		sel := w.value == window
		found = found || sel
		opts = append(opts, model.Option{Value: w.value, Label: w.label, Selected: sel})
	}
	if !found {
		opts[0].Selected = true
	}
	return opts
}

// dateTimeLocal is an <input type=datetime-local>'s value, read as UTC.
const dateTimeLocal = "2006-01-02T15:04"

// window is f's window, bounded by the recorded traffic's retention: a
// from–to must end after it starts, not in the future, and start no earlier
// than the oldest recorded traffic.
func (h *Handlers) window(ctx context.Context, f jobForm) (since, until time.Time, words string, err error) {
	now := time.Now().UTC().Truncate(time.Second)
	for _, w := range windows {
		if w.value == f.window && w.d > 0 {
			return now.Add(-w.d), now, w.words, nil
		}
	}
	if f.window != "range" {
		return now.Add(-windows[0].d), now, windows[0].words, nil
	}
	since, err1 := time.Parse(dateTimeLocal, strings.TrimSpace(f.from))
	until, err2 := time.Parse(dateTimeLocal, strings.TrimSpace(f.to))
	switch {
	case err1 != nil || err2 != nil:
		return since, until, "", errors.New("the window: give From and To as date and time (UTC), e.g. 2026-12-06T14:00")
	case !until.After(since):
		return since, until, "", errors.New("the window: To must be after From")
	case until.After(now.Add(time.Minute)):
		return since, until, "", errors.New("the window: To is in the future")
	}
	if st, err := h.d.Traffic.TrafficStats(ctx); err == nil && !st.Oldest.IsZero() && until.Before(st.Oldest) {
		return since, until, "", fmt.Errorf("the window: it ends before the oldest recorded traffic (%s UTC)", st.Oldest.UTC().Format(time.DateTime))
	}
	return since, until, "from " + since.Format(time.DateTime) + " to " + until.Format(time.DateTime) + " UTC", nil
}

// retentionWords is the traffic's retention in days or hours.
func retentionWords(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		if n := int(d / (24 * time.Hour)); n != 1 {
			return fmt.Sprintf("%d days", n)
		}
		return "a day"
	}
	return d.String()
}
