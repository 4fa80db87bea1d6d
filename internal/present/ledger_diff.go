package present

import (
	"strconv"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/managedfields"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// LedgerTime formats a time for the ledger's views: UTC to the second, as
// the API server's audit log and managedFields count.
func LedgerTime(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func thousands(n int) string { return Thousands(int64(n)) }

// Thousands is n with commas between its groups of three digits.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// StepDiff presents an entry's unified diff (audit.Diff's text) as diff
// lines with old and new line numbers: the console's diff of its write, or
// the diff between the versions the watch observed (also lent to the
// write that left the version, ledger.Query.OnePerVersion); nil when the
// entry has none to show.
func StepDiff(e ledger.Entry) *model.Diff {
	d := model.Diff{Title: "The console's diff", From: "before", To: "after"}
	if e.Source != ledger.SourceConsole {
		d.Title = "Changes the watch observed"
		if e.RV != "" {
			d.To = "version " + e.RV
		}
	}
	switch {
	case e.Diff == "" && e.Source == ledger.SourceWatch && (e.Action == ledger.ActionUpdate || e.Action == ledger.ActionStatus):
		d.Note = "Only bookkeeping changed (resourceVersion or managedFields)."
		return &d
	case e.Diff == "":
		return nil
	}
	switch e.Action {
	case ledger.ActionCreate:
		d.Title, d.From = "Created with", "nothing"
	case ledger.ActionDelete:
		d.Title, d.To = "Deleted", "nothing"
	}
	d.Lines, d.Added, d.Removed = UnifiedLines(e.Diff)
	if strings.HasSuffix(strings.TrimSuffix(e.Diff, "\n"), "…") || len(e.Diff) >= maxDiffShown {
		d.Note = "The diff is cut: it is longer than the ledger keeps per change."
	}
	return &d
}

// maxDiffShown is audit.MaxDiff as the views know it: a diff this long was
// cut when it was recorded.
const maxDiffShown = 64 << 10

// LedgerManagers presents the cached object's managedFields now: which field
// manager last wrote which fields, newest first (also from before the
// console started, which no entry tells).
func LedgerManagers(ms []managedfields.Manager) []model.LedgerManager {
	var out []model.LedgerManager
	for _, m := range ms {
		row := model.LedgerManager{Manager: m.Manager, Operation: m.Operation, Subresource: m.Subresource, Time: LedgerTime(m.Time)}
		row.Fields = m.Fields
		if len(row.Fields) > maxRowFields {
			row.Fields = append(append([]string{}, m.Fields[:maxRowFields]...), "… "+strconv.Itoa(len(m.Fields)-maxRowFields)+" more")
		}
		out = append(out, row)
	}
	return out
}

// maxRowFields is how many fields a manager's row lists.
const maxRowFields = 5

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
