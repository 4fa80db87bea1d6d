package edit

import (
	"errors"
	"fmt"
	"strings"
)

// MaxText is the largest editor text clusterdesk accepts, in bytes: the editor
// routes' body limit (handlers' editorBody), and so also the most a starting
// version (the base) may expand to. A legitimate base is the text the editor
// showed, which came in the same limit; more is a forged field.
const MaxText = 6 << 20

// MaxDiffCells bounds the work of one line diff or rebase: the lines of the
// two texts that differ (after their common first and last lines), multiplied.
// A line diff's worst case grows with that product; 25 million is 5,000 × 5,000
// changed lines, more than anyone reviews, while a small change to the largest
// CRD (tens of thousands of lines, almost all common) stays far below it.
const MaxDiffCells = 25_000_000

// TooLargeError says that two texts differ in too many lines to diff.
type TooLargeError struct{ From, To int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("too large to diff: %d × %d lines differ (more than %d line pairs to compare)", e.From, e.To, MaxDiffCells)
}

// ErrBaseTooLarge is returned by DecodeBase for a base that expands beyond MaxText.
var ErrBaseTooLarge = errors.New("the form's starting version expands to more than the editor's limit")

// checkDiffWork returns a *TooLargeError when diffing from and to would cost
// more than MaxDiffCells. It is linear in the texts' length.
func checkDiffWork(from, to string) error {
	n, m := differingLines(from, to)
	if n*m > MaxDiffCells {
		return &TooLargeError{From: n, To: m}
	}
	return nil
}

// differingLines counts the lines of a and b left after removing the lines
// they share at the start and at the end: what a line diff has to compare.
func differingLines(a, b string) (int, int) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	// Back to the start of the line the first difference is on.
	p = strings.LastIndexByte(a[:p], '\n') + 1
	a, b = a[p:], b[p:]
	s := 0
	for s < len(a) && s < len(b) && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	// Forward to the start of the next line when the common end begins
	// mid-line (off by at most a line for b: a bound, not a count).
	if start := len(a) - s; start > 0 && a[start-1] != '\n' {
		if i := strings.IndexByte(a[start:], '\n'); i >= 0 {
			s -= i + 1
		} else {
			s = 0
		}
	}
	return lines(a[:len(a)-s]), lines(b[:len(b)-s])
}

func lines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
