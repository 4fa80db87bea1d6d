// Package labelselector reads the label selectors people type (kubectl -l
// syntax) for every list, the CSR queue, a CRD's objects and cleanup: one
// parser, one length limit, one wording of what is wrong.
package labelselector

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
)

// MaxLen bounds the selector text accepted: kubectl's -l values are short,
// and the parser's work grows with the text.
const MaxLen = 4096

// Error is a selector the API server would refuse, in words a person can act on.
type Error struct {
	Text string // the selector as typed, trimmed
	Err  error  // the parser's own message; nil when Text is too long
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("the label selector is %d characters long; at most %d are accepted", len(e.Text), MaxLen)
	}
	return fmt.Sprintf("%q is not a label selector: %v", e.Text, e.Err)
}

// Parse reads text, trimmed, as a label selector with
// k8s.io/apimachinery/pkg/labels.Parse: the parser the API server applies to
// ?labelSelector= (apimachinery/pkg/labels/selector.go), so what it accepts
// here the API server accepts too. "" selects everything. It returns the
// trimmed text with the selector; a failure is an *Error.
func Parse(text string) (labels.Selector, string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return labels.Everything(), "", nil
	}
	if len(text) > MaxLen {
		return nil, text, &Error{Text: text}
	}
	sel, err := labels.Parse(text)
	if err != nil {
		return nil, text, &Error{Text: text, Err: err}
	}
	return sel, text, nil
}
