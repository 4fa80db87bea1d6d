package present

import (
	"strconv"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/activity"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// ActivityTime formats a time for the activity views: UTC to the second, as
// the API server's audit log and managedFields count.
func ActivityTime(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// maxRowFields is how many fields a row of the activity page lists.
const maxRowFields = 5

// ActivityRow presents one entry. kind is the API kind ("FlowSchema"); href
// is the object's page, "" when there is none.
func ActivityRow(e activity.Entry, kind, href string) model.ActivityRow {
	r := model.ActivityRow{
		Time: ActivityTime(e.Time), KindID: e.Kind, Kind: kind, Name: e.Name, Href: href,
		HistoryHref: urls.History(e.Kind, e.Name),
		Source:      e.Source, Change: e.Op, User: e.User, Manager: e.Manager, Operation: e.Operation,
		Subresource: e.Subresource, Fields: e.Fields, RV: e.RV, PrevRV: e.PrevRV,
		HasDiff: e.Diff != "",
	}
	// The page lists a few fields per row; the exports hold them all.
	if len(r.Fields) > maxRowFields+1 {
		r.Fields = append(r.Fields[:maxRowFields:maxRowFields], "… "+itoa(len(e.Fields)-maxRowFields)+" more")
	}
	if !e.Time.IsZero() {
		r.TimeISO = e.Time.UTC().Format(time.RFC3339)
	}
	r.SourceLabel = "observed"
	if e.Source == activity.SourceManagedFields {
		r.SourceLabel = "managedFields"
	}
	switch e.Op {
	case activity.OpCreated:
		r.ChangeTone = model.ToneOK
	case activity.OpDeleted:
		r.ChangeTone = model.ToneError
	case activity.OpUpdated:
		r.ChangeTone = model.TonePending
	default:
		r.ChangeTone = model.ToneNeutral
	}
	return r
}

// ActivityAbout says what the activity views can know.
func ActivityAbout(started time.Time, capacity int, dropped int64) model.ActivityAbout {
	a := model.ActivityAbout{ObservingSince: ActivityTime(started), Capacity: thousands(capacity) + " changes",
		Disclaimer: activity.Disclaimer}
	if dropped > 0 {
		a.Dropped = thousands(int(dropped)) + " observed changes were not recorded: the console could not keep up."
	}
	return a
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// HistoryDiff presents an entry's unified diff (audit.Diff's text) as diff
// lines with old and new line numbers.
func HistoryDiff(e activity.Entry) model.Diff {
	d := model.Diff{Title: "Changes", From: "version " + orDash(e.PrevRV), To: "version " + orDash(e.RV)}
	switch {
	case e.DiffDropped:
		d.Note = "The diff of this change was dropped to keep the activity log within its memory budget."
		return d
	case e.Diff == "" && e.Op == activity.OpUpdated:
		d.Note = "Only bookkeeping changed (resourceVersion or managedFields)."
		return d
	case e.Diff == "":
		d.Note = "No diff recorded."
		return d
	}
	switch e.Op {
	case activity.OpCreated:
		d.Title, d.From = "Created with", "nothing"
	case activity.OpDeleted:
		d.Title, d.To = "Deleted", "nothing"
	}
	d.Lines, d.Added, d.Removed = UnifiedLines(e.Diff)
	if e.DiffTruncated {
		d.Note = "The diff is cut: it is longer than the activity log keeps per change."
	}
	return d
}

// UnifiedLines parses a unified diff ("---", "+++" headers, "@@" hunks) into
// view lines, counting added and removed lines.
func UnifiedLines(text string) (lines []model.DiffLine, added, removed int) {
	var oldN, newN int
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ "):
			continue
		case strings.HasPrefix(l, "@@"):
			oldN, newN = hunkStarts(l)
			lines = append(lines, model.DiffLine{Kind: model.DiffHunk, Text: l})
		case strings.HasPrefix(l, "+"):
			lines = append(lines, model.DiffLine{Kind: model.DiffAdded, New: strconv.Itoa(newN), Text: l[1:]})
			newN++
			added++
		case strings.HasPrefix(l, "-"):
			lines = append(lines, model.DiffLine{Kind: model.DiffRemoved, Old: strconv.Itoa(oldN), Text: l[1:]})
			oldN++
			removed++
		case strings.HasPrefix(l, `\`): // "\ No newline at end of file"
			continue
		default:
			lines = append(lines, model.DiffLine{Kind: model.DiffContext, Old: strconv.Itoa(oldN), New: strconv.Itoa(newN), Text: strings.TrimPrefix(l, " ")})
			oldN++
			newN++
		}
	}
	return lines, added, removed
}

// hunkStarts reads "@@ -a,b +c,d @@" and returns a and c.
func hunkStarts(h string) (oldStart, newStart int) {
	for _, f := range strings.Fields(h) {
		if len(f) < 2 || (f[0] != '-' && f[0] != '+') {
			continue
		}
		n, _, _ := strings.Cut(f[1:], ",")
		v, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if f[0] == '-' {
			oldStart = v
		} else {
			newStart = v
		}
	}
	return oldStart, newStart
}
