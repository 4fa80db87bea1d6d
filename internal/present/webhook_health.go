package present

import (
	"math"
	"strconv"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// healthKey is how the API server's metrics name a webhook of cfg.
func healthKey(cfg admission.Config, h admission.Hook) apfload.WebhookKey {
	t := apfload.TypeValidating
	if cfg.Kind == admission.Mutating {
		t = apfload.TypeMutating
	}
	return apfload.WebhookKey{Type: t, Name: h.Name}
}

func formatSeconds(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	if v < 1 {
		return strconv.FormatFloat(v*1000, 'f', 0, 64) + " ms"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " s"
}

// hookHealth lints one webhook's health and makes its badges.
func hookHealth(cfg admission.Config, h admission.Hook, ld *apfload.Load) (w apfload.WebhookLoad, seen bool, fs []model.Finding, badges []model.Badge) {
	w, seen = ld.Webhooks[healthKey(cfg, h)]
	if !seen {
		return w, false, nil, nil
	}
	fs = findings(admission.LintHealth(h, admission.Health{FailedOpen: w.FailedOpen, P99: w.P99}))
	for _, f := range fs {
		text := f.Title
		if f.Code == admission.CodeFailedOpen {
			text = "failed open " + formatCount(w.FailedOpen)
		}
		badges = append(badges, model.Badge{Text: text, Tone: f.Tone, Hint: f.Message})
	}
	if len(fs) == 0 && w.FailOpenTotal > 0 {
		badges = append(badges, model.Badge{Text: "failed open " + formatCount(w.FailOpenTotal) + " since start", Tone: model.ToneNeutral,
			Hint: "calls that failed and were ignored (failurePolicy Ignore) since the API server started, none since the last read"})
	}
	return w, true, fs, badges
}

// WebhookHealthInsight is each webhook's health, measured by the API server,
// for a configuration's detail page: calls, latency, rejections and calls
// that failed open, with the health lint as findings.
func WebhookHealthInsight(cfg admission.Config, st APFLoadState) model.Insight {
	banner := st.LoadBanner()
	in := model.Insight{Title: "Webhook health " + loadScope(st.Load), TestID: "webhook-health", Intro: banner.Message, Follow: st.Follow}
	if st.Load == nil {
		return in
	}
	ld := st.Load
	table := &model.RichTable{
		Columns: []string{"Webhook", "Calls", "p50", "p99", "Failed open", "Rejections", "Health"},
		Empty:   "This configuration has no webhooks.",
	}
	for _, h := range cfg.Hooks {
		w, seen, fs, badges := hookHealth(cfg, h, ld)
		if !seen {
			table.Rows = append(table.Rows, model.RichRow{TestID: "webhook-health-row", Cells: []model.Rich{
				{Text: h.Name, Mono: true}, {Text: "not called since the API server started"}, {}, {}, {}, {}, {}}})
			continue
		}
		for _, f := range fs {
			f.Title = h.Name + ": " + f.Title
			in.Findings = append(in.Findings, f)
		}
		table.Rows = append(table.Rows, model.RichRow{TestID: "webhook-health-row", Cells: hookHealthCells(h.Name, true, ld, w, badges)})
		table.Rows = append(table.Rows, instanceHealthRows(cfg, h, ld)...)
	}
	in.Table = table
	return in
}

// hookHealthCells is one row of the health table: a webhook's (its name in
// mono), or one instance's measure of it.
func hookHealthCells(label string, mono bool, ld *apfload.Load, w apfload.WebhookLoad, badges []model.Badge) []model.Rich {
	return []model.Rich{
		{Text: label, Mono: mono},
		{Text: formatRate(ld, w.RequestsPerSecond), Hint: formatCount(w.RequestsTotal) + " since the API server started"},
		{Text: formatSeconds(w.P50), Hint: "over the calls since the last read"},
		{Text: formatSeconds(w.P99), Hint: "over the calls since the last read; since the API server started: " + formatSeconds(w.LifetimeP99)},
		{Text: formatCount(w.FailedOpen) + " since the last read, " + formatCount(w.FailOpenTotal) + " in all"},
		{Text: reasonsText(ld, w.Rejections)},
		{Badges: badges},
	}
}

// instanceHealthRows are a webhook's health as each API server instance
// measured it, below its total row, when there are several: a slow or
// failing webhook is often slow from one instance only (its network path,
// its client certificate), and an instance that did not answer says so.
func instanceHealthRows(cfg admission.Config, h admission.Hook, ld *apfload.Load) []model.RichRow {
	if !perInstance(ld) {
		return nil
	}
	var rows []model.RichRow
	for _, in := range ld.Instances {
		label := "on " + instanceHost(in.Name)
		if !in.Reachable() {
			rows = append(rows, model.RichRow{TestID: "webhook-health-instance", Cells: []model.Rich{
				{Text: label}, {Text: "did not answer: unknown, not zero", Hint: errText(in.Err)}, {}, {}, {}, {}, {}}})
			continue
		}
		w, seen, _, badges := hookHealth(cfg, h, in.Load)
		if !seen {
			rows = append(rows, model.RichRow{TestID: "webhook-health-instance", Cells: []model.Rich{
				{Text: label}, {Text: "not called since this instance started"}, {}, {}, {}, {}, {}}})
			continue
		}
		rows = append(rows, model.RichRow{TestID: "webhook-health-instance", Cells: hookHealthCells(label, false, in.Load, w, badges)})
	}
	return rows
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// AddWebhookHealth adds a health column to a webhook configuration list:
// configs holds each row's configuration (missing ones show a dash); with no
// load the cells say so.
func AddWebhookHealth(page *model.ListPage, configs map[string]admission.Config, ld *apfload.Load) {
	page.Columns = append(page.Columns, model.Column{Key: "health", Label: "Health"})
	for i, r := range page.Rows {
		if ld == nil {
			page.Rows[i].Cells = append(r.Cells, noLoadCell())
			continue
		}
		cfg, ok := configs[r.Name]
		cell := model.Cell{Text: "—", Title: "not called since the API server started"}
		if ok {
			var badges []model.Badge
			called := false
			for _, h := range cfg.Hooks {
				_, seen, _, b := hookHealth(cfg, h, ld)
				called = called || seen
				for _, x := range b {
					x.Hint = h.Name + ": " + x.Hint
					badges = append(badges, x)
				}
			}
			switch {
			case len(badges) > 0:
				cell = model.Cell{Badges: badges}
			case called:
				cell = model.Cell{Badges: []model.Badge{{Text: "ok", Tone: model.ToneOK, Hint: "no call failed open and p99 is within 80% of the timeout"}}}
			}
		}
		page.Rows[i].Cells = append(r.Cells, cell)
	}
}
