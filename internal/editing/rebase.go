package editing

import (
	"context"
	"errors"

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Rebase is a request to carry the user's text onto the current version.
type Rebase struct {
	Kind       kube.Kind
	Name       string
	Text       string // the user's text
	BaseText   string // the text they started from
	ShowStatus bool   // the editor shows status: so does the current text
	// KeepMine keeps the user's text as it is; otherwise their changes are
	// replayed onto the current version (a three-way merge by lines).
	KeepMine bool
}

// Rebased is the editor's new starting point. On edit.ErrOverlap, Text is
// the user's, and CurrentText and Version say what it is to be compared with.
type Rebased struct {
	Text        string // the text to show: the merge, or the user's own
	CurrentText string // the current version as the editor shows it: the new base
	Version     string // the current resourceVersion
}

// Rebase reads the current version and carries the user's text onto it. It
// writes nothing: the user previews and applies again, now against the
// current version. The error is edit.ErrOverlap when the user's changes and
// the server's touch the same lines, an *edit.InputError when the texts are
// too large to merge, or the API server's.
func (s *Service) Rebase(ctx context.Context, r Rebase) (Rebased, error) {
	current, err := s.API.Get(ctx, r.Kind, r.Name)
	if err != nil {
		return Rebased{}, err
	}
	curText, err := edit.Text(current, r.ShowStatus)
	if err != nil {
		return Rebased{}, err
	}
	out := Rebased{Text: r.Text, CurrentText: curText, Version: current.GetResourceVersion()}
	if r.KeepMine {
		return out, nil
	}
	merged, err := edit.Rebase(r.BaseText, r.Text, curText)
	var tooLarge *edit.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return Rebased{}, &edit.InputError{Title: "Too large to rebase", Message: "A rebase compares your text and the current version " +
			"with the version you started from, and they are " + tooLarge.Error() + ". Your text is unchanged; use “Keep my text, start from current” and review the change with kubectl diff."}
	case err != nil:
		return out, err
	}
	out.Text = merged
	return out, nil
}
