package edit

import (
	"fmt"
	"strconv"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// contextLines is how many unchanged lines surround each change, as in `diff -u`.
const contextLines = 3

// Diff compares two texts line by line and returns a unified diff as view lines:
// hunk headers, context, removed and added lines with their old and new line
// numbers. Equal texts give no lines and a Note saying so.
func Diff(title, fromLabel, toLabel, from, to string) TextDiff {
	d := TextDiff{Title: title, From: fromLabel, To: toLabel}
	from, to = Normalize(from), Normalize(to)
	if from == to {
		d.Note = "No difference."
		return d
	}
	if err := checkDiffWork(from, to); err != nil {
		d.Note, d.TooLarge = tooLargeNote(err.(*TooLargeError)), true
		return d
	}
	u, err := udiff.ToUnifiedDiff(fromLabel, toLabel, from, udiff.Lines(from, to), contextLines)
	if err != nil {
		// Cannot happen: the edits were computed from the same text.
		d.Note = "The difference could not be computed: " + err.Error()
		return d
	}
	for _, h := range u.Hunks {
		oldN, newN := h.FromLine, h.ToLine
		var oldLen, newLen int
		for _, l := range h.Lines {
			if l.Kind != udiff.Insert {
				oldLen++
			}
			if l.Kind != udiff.Delete {
				newLen++
			}
		}
		d.Lines = append(d.Lines, DiffLine{Kind: DiffHunk,
			Text: fmt.Sprintf("@@ -%s +%s @@", span(oldN, oldLen), span(newN, newLen))})
		for _, l := range h.Lines {
			line := DiffLine{Text: strings.TrimSuffix(l.Content, "\n")}
			switch l.Kind {
			case udiff.Equal:
				line.Kind, line.Old, line.New = DiffContext, strconv.Itoa(oldN), strconv.Itoa(newN)
				oldN++
				newN++
			case udiff.Delete:
				line.Kind, line.Old = DiffRemoved, strconv.Itoa(oldN)
				oldN++
				d.Removed++
			case udiff.Insert:
				line.Kind, line.New = DiffAdded, strconv.Itoa(newN)
				newN++
				d.Added++
			}
			d.Lines = append(d.Lines, line)
		}
	}
	return d
}

// tooLargeNote is what the diff view says instead of a diff too costly to compute.
func tooLargeNote(e *TooLargeError) string {
	return fmt.Sprintf("Too large to diff: %d × %d lines differ, more than clusterdesk compares in one request. "+
		"Review the change with kubectl diff.", e.From, e.To)
}

// span formats a hunk range as diff -u does: "start,len", or "start" for one line.
func span(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	if n == 0 {
		// An empty range names the line before it.
		start--
	}
	return fmt.Sprintf("%d,%d", start, n)
}
