package present

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/apfload"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// APFLoadState is what the console knows of API Priority and Fairness load for
// one page view: the load, or why there is none.
type APFLoadState struct {
	Load      *apfload.Load
	Forbidden bool  // the user may not get /metrics
	Allowed   bool  // the user may get /metrics (false also when the access review failed)
	Err       error // the scrape failed, or none finished in time
	Interval  time.Duration
	// Follow is set on a page rendered before the sampler's first read: the
	// page says sampling started, and with JavaScript fetches its load
	// fragment again from this URL (which then waits for the read).
	Follow string
}

// Pending reports that the sampler has not read /metrics yet.
func (s APFLoadState) Pending() bool { return s.Err != nil && errors.Is(s.Err, apfload.ErrNoSample) }

// LoadBanner says where the numbers come from, or why they are missing.
func (s APFLoadState) LoadBanner() model.Banner {
	switch {
	case s.Forbidden:
		return model.Banner{Tone: model.ToneNeutral, Title: "Load not shown", TestID: "apf-load-forbidden",
			Message: "Your identity may not read /metrics, so load is not shown (Kubernetes RBAC: get on the non-resource URL /metrics)."}
	case s.Pending() && s.Follow != "":
		return model.Banner{Tone: model.TonePending, Title: "Sampling started", TestID: "apf-load-pending",
			Message: "clusterdesk started reading the API server's /metrics when this page opened; the load fills in when the first read is in (without JavaScript, reload the page in a few seconds). " +
				"Metrics are per API server instance: with several API servers behind a load balancer, these numbers are one instance's."}
	case s.Pending():
		return model.Banner{Tone: model.TonePending, Title: "Load not read yet", TestID: "apf-load-pending",
			Message: "clusterdesk is reading the API server's /metrics; reload in a few seconds."}
	case s.Err != nil:
		return model.Banner{Tone: model.ToneWarning, Title: "Load unavailable", TestID: "apf-load-error",
			Message: "clusterdesk could not read the API server's /metrics: " + s.Err.Error()}
	}
	msg := "Live load from the API server's /metrics, read every " + s.Interval.String() + ". " + sourceText(s.Load)
	if s.Load != nil && !s.Load.HasRates() {
		msg += " Rates appear after the second read."
	}
	if s.Load != nil && len(s.Load.Unreachable()) > 0 {
		return model.Banner{Tone: model.ToneWarning, Title: "Live load: an API server instance did not answer", Message: msg, TestID: "apf-load-note"}
	}
	return model.Banner{Tone: model.ToneNeutral, Title: "Live load", Message: msg, TestID: "apf-load-note"}
}

// formatRate shows a per-second rate: "35/s", "0.4/s", "0/s"; "…" before rates are known.
func formatRate(ld *apfload.Load, v float64) string {
	if !ld.HasRates() {
		return "…"
	}
	switch {
	case v == 0:
		return "0/s"
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64) + "/s"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + "/s"
}

func requests(v float64) string {
	if v == 1 {
		return "1 request"
	}
	return formatCount(v) + " requests"
}

func formatCount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// reasonsText is "queue-full 30/s, time-out 0/s" (the rate per reason since the last read).
func reasonsText(ld *apfload.Load, rs []apfload.ReasonRate) string {
	if len(rs) == 0 {
		return "none since the API server started"
	}
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%s %s (%s in all)", r.Reason, formatRate(ld, r.PerSecond), formatCount(r.Total)))
	}
	return strings.Join(parts, ", ")
}

func rejectBadge(ld *apfload.Load, perSecond float64) []model.Badge {
	if ld.HasRates() && perSecond > 0 {
		return []model.Badge{{Text: "rejecting " + formatRate(ld, perSecond), Tone: model.ToneError,
			Hint: "the API server answered 429 to this many requests per second since the last read"}}
	}
	return nil
}

// seatsText is "in use 3 of nominal 10".
func seatsText(l apfload.LevelLoad) string {
	if !l.HasLimits || l.NominalSeats == 0 { // Exempt levels report 0: no limit
		return formatCount(l.ExecutingSeats) + " in use (no limit)"
	}
	return formatCount(l.ExecutingSeats) + " in use of " + formatCount(l.NominalSeats) + " nominal"
}

// PriorityLevelLoadSection is a priority level's live load for its detail page.
func PriorityLevelLoadSection(name string, ld *apfload.Load) model.Section {
	sec := model.Section{Title: "Live load " + loadScope(ld), TestID: "apf-load"}
	l, ok := ld.Levels[name]
	if !ok {
		sec.Fields = []model.Field{{Label: "Load", Value: "the API server reports nothing for this priority level yet"}}
		return sec
	}
	sec.Fields = []model.Field{
		{Label: "Seats", Value: seatsText(l), Hint: "seats occupied by executing requests; nominal is the level's share of the server's concurrency limit"},
	}
	if l.HasLimits {
		sec.Fields = append(sec.Fields,
			model.Field{Label: "Seat limits", Value: fmt.Sprintf("lower %s, upper %s, current %s", formatCount(l.LowerSeats), formatCount(l.UpperSeats), formatCount(l.CurrentLimitSeats)),
				Hint: "lower: nominal minus what it lends; upper: nominal plus what it may borrow; current: the limit after borrowing"})
	}
	sec.Fields = append(sec.Fields,
		model.Field{Label: "Executing", Value: requests(l.Executing)},
		model.Field{Label: "Waiting", Value: requests(l.Waiting) + " in queues"},
		model.Field{Label: "Dispatched", Value: formatRate(ld, l.DispatchedPerSecond)},
		model.Field{Label: "Rejected", Value: formatRate(ld, l.RejectedPerSecond), Badges: rejectBadge(ld, l.RejectedPerSecond)},
		model.Field{Label: "Rejected by reason", Value: reasonsText(ld, l.Rejected)},
	)
	sec.Fields = append(sec.Fields, byInstanceFields(ld, levelDispatched(name), levelRejected(name))...)
	return sec
}

// byInstanceFields are a detail section's per-instance rates, when there
// are several instances.
func byInstanceFields(ld *apfload.Load, dispatched, rejected func(*apfload.Load) (float64, bool)) []model.Field {
	if !perInstance(ld) || !ld.HasRates() {
		return nil
	}
	return []model.Field{
		{Label: "Rejected by instance", Value: instanceRates(ld, rejected),
			Hint: "each rate from two reads of the same instance"},
		{Label: "Dispatched by instance", Value: instanceRates(ld, dispatched)},
	}
}

// FlowSchemaLoadSection is a FlowSchema's live load for its detail page.
func FlowSchemaLoadSection(name string, ld *apfload.Load) model.Section {
	sec := model.Section{Title: "Live load " + loadScope(ld), TestID: "apf-load"}
	s, ok := ld.Schemas[name]
	if !ok || !s.Matched {
		sec.Fields = []model.Field{{Label: "Requests", Value: "no request matched since the API server started"}}
		return sec
	}
	sec.Fields = []model.Field{
		{Label: "Dispatched", Value: formatRate(ld, s.DispatchedPerSecond)},
		{Label: "Rejected", Value: formatRate(ld, s.RejectedPerSecond), Badges: rejectBadge(ld, s.RejectedPerSecond)},
		{Label: "Rejected by reason", Value: reasonsText(ld, s.Rejected)},
		{Label: "Executing", Value: requests(s.Executing)},
		{Label: "Waiting", Value: requests(s.Waiting) + " in queues"},
	}
	sec.Fields = append(sec.Fields, byInstanceFields(ld, schemaDispatched(name), schemaRejected(name))...)
	return sec
}

// AddPriorityLevelLoad adds the seats, waiting and rejected columns to the
// priority level list. The columns are not sortable: the load changes between
// views, the sort order would not hold still. With no load (not read yet, or
// the read failed) the cells say so: the columns are there for everyone who
// may read /metrics, so a live row always fits its table.
func AddPriorityLevelLoad(page *model.ListPage, ld *apfload.Load) {
	page.Columns = append(page.Columns,
		model.Column{Key: "seats", Label: "Seats in use / nominal"},
		model.Column{Key: "waiting", Label: "Waiting"},
		model.Column{Key: "rejected", Label: "Rejected"})
	for i, r := range page.Rows {
		if ld == nil {
			page.Rows[i].Cells = append(r.Cells, noLoadCell(), noLoadCell(), noLoadCell())
			continue
		}
		l, ok := ld.Levels[r.Name]
		if !ok {
			missing := notInSampleCell(ld)
			page.Rows[i].Cells = append(r.Cells, missing, missing, missing)
			continue
		}
		seats := formatCount(l.ExecutingSeats)
		if l.HasLimits && l.NominalSeats > 0 { // Exempt levels report 0: no limit
			seats += " / " + formatCount(l.NominalSeats)
		}
		title := reasonsText(ld, l.Rejected)
		if by := instanceRates(ld, levelRejected(r.Name)); by != "" && ld.HasRates() {
			title += "; by instance: " + by
		}
		rejected := model.Cell{Text: formatRate(ld, l.RejectedPerSecond), Title: title}
		if b := rejectBadge(ld, l.RejectedPerSecond); b != nil {
			rejected = model.Cell{Badges: b, Title: title}
		}
		rejected.Note = rejectedNote(ld, l, r.Name)
		page.Rows[i].Cells = append(r.Cells, model.Cell{Text: seats}, model.Cell{Text: formatCount(l.Waiting)}, rejected)
	}
}

// rejectedNote is the Rejected cell's second line while a level rejects and
// more than one instance answers: which instance rejects ("54/s on
// 10.0.0.2, 0/s on the others"). An idle level gets none, so the list stays
// as narrow as it was; the instances that did not answer are in the banner
// and the cell's title.
func rejectedNote(ld *apfload.Load, l apfload.LevelLoad, name string) string {
	if !ld.HasRates() || l.RejectedPerSecond <= 0 || answering(ld) < 2 {
		return ""
	}
	return strings.Join(answeredRates(ld, levelRejected(name)), ", ")
}

// notInSampleCell stands for a load cell of a level the latest read of
// /metrics has no series for: a level created since that read, or one the API
// server has not configured yet. The next read fills it in.
func notInSampleCell(ld *apfload.Load) model.Cell {
	return model.Cell{Text: "—", Title: "the API server reported nothing for this level in the read of " +
		ld.At.UTC().Format("15:04:05") + " UTC; a level created since then shows its load after the next read"}
}

// noLoadCell stands for a load cell while there is no load to show.
func noLoadCell() model.Cell {
	return model.Cell{Text: "…", Title: "no load read from the API server's /metrics (the banner says why)"}
}

// AddFlowSchemaLoad fills the FlowSchema overview's load column ("…" while
// there is no load).
func AddFlowSchemaLoad(page *model.FlowSchemaListPage, ld *apfload.Load) {
	page.LoadShown = true
	page.List.Columns = append(page.List.Columns, model.Column{Key: "load", Label: "Load"})
	for i, r := range page.Rows {
		if ld == nil {
			page.Rows[i].Load = noLoadCell().Text
			continue
		}
		s, ok := ld.Schemas[r.Name]
		if !ok || !s.Matched {
			page.Rows[i].Load = "no request matched since the API server started"
			continue
		}
		page.Rows[i].Load = formatRate(ld, s.DispatchedPerSecond) + " dispatched, " + formatRate(ld, s.RejectedPerSecond) + " rejected"
		if s.RejectedPerSecond > 0 {
			// Where the 429s come from: an overloaded or misconfigured
			// instance is what the admin must see.
			if by := instanceRates(ld, schemaRejected(r.Name)); by != "" {
				page.Rows[i].Load += " (" + by + ")"
			}
		}
		page.Rows[i].LoadBadges = rejectBadge(ld, s.RejectedPerSecond)
	}
}

// ClassifyLoad is the classifier's sentence on where the request lands:
// "this request lands in workload-low, which is rejecting 35/s".
func ClassifyLoad(level string, ld *apfload.Load) (string, []model.Badge) {
	l, ok := ld.Levels[level]
	if !ok {
		return "This request lands in " + level + ", for which the API server reports no load yet.", nil
	}
	if !ld.HasRates() {
		return fmt.Sprintf("This request lands in %s: %s executing, %s waiting (rates after the next read).", level, formatCount(l.Executing), formatCount(l.Waiting)), nil
	}
	if l.RejectedPerSecond > 0 {
		msg := fmt.Sprintf("This request lands in %s, which is rejecting %s (%s).", level, formatRate(ld, l.RejectedPerSecond), reasonsText(ld, l.Rejected))
		if by := instanceRates(ld, levelRejected(level)); by != "" {
			msg += " By API server instance: rejecting " + by + "."
		}
		return msg, rejectBadge(ld, l.RejectedPerSecond)
	}
	msg := fmt.Sprintf("This request lands in %s, which is rejecting nothing: %s executing, %s waiting, %s dispatched.",
		level, formatCount(l.Executing), formatCount(l.Waiting), formatRate(ld, l.DispatchedPerSecond))
	if u := unreachableText(ld); u != "" {
		msg += " " + u + "."
	}
	return msg, nil
}
