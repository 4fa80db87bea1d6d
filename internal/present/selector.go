package present

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// maxSelector bounds the selector text a list accepts: kubectl's -l values
// are short, and the parser's work grows with the text.
const maxSelector = 4096

// ParseSelector reads a label selector in kubectl -l syntax
// ("app=web,tier!=db", "env in (a,b)", "!canary"), with
// k8s.io/apimachinery/pkg/labels.Parse, the parser the API server applies to
// ?labelSelector= (apimachinery/pkg/labels/selector.go). "" selects
// everything. The error says what is wrong in words a person can act on.
func ParseSelector(text string) (labels.Selector, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return labels.Everything(), nil
	}
	if len(text) > maxSelector {
		return nil, fmt.Errorf("the label selector is %d characters long; at most %d are accepted", len(text), maxSelector)
	}
	sel, err := labels.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%q is not a label selector: %w", text, err)
	}
	return sel, nil
}

// Selected keeps the objects whose labels q's selector selects, in order: no
// selector keeps everything (the slice itself), a selector that did not parse
// keeps nothing. It reads the labels the informer cache holds; no LIST.
func Selected[T metav1.Object](items []T, q ListQuery) []T {
	if q.SelectorErr == nil && (q.Labels == nil || q.Labels.Empty()) {
		return items
	}
	out := make([]T, 0, len(items))
	for _, o := range items {
		if q.Selects(o.GetLabels()) {
			out = append(out, o)
		}
	}
	return out
}
