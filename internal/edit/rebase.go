package edit

import (
	"errors"

	udiff "github.com/aymanbagabas/go-udiff"
)

// ErrOverlap is returned by Rebase when the user's edits and the server's changes
// touch the same lines: only a person can decide which wins.
var ErrOverlap = errors.New("your changes and the changes on the server touch the same lines")

// Rebase replays the user's edits (base → mine) onto the current server text
// (base → current), line by line, as a three-way merge: lines only the user
// changed keep the user's version, lines only the server changed keep the
// server's. All three texts must be rendered the same way (Text with the same
// showStatus), so unchanged fields give identical lines.
func Rebase(base, mine, current string) (string, error) {
	base, mine, current = Normalize(base), Normalize(mine), Normalize(current)
	switch {
	case base == current:
		return mine, nil
	case base == mine:
		return current, nil
	}
	// Two line diffs: each is bounded like Diff's (a *TooLargeError).
	if err := checkDiffWork(base, mine); err != nil {
		return "", err
	}
	if err := checkDiffWork(base, current); err != nil {
		return "", err
	}
	merged, ok := udiff.Merge(udiff.Lines(base, mine), udiff.Lines(base, current))
	if !ok {
		return "", ErrOverlap
	}
	return udiff.Apply(base, merged)
}
