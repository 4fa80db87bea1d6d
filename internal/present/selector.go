package present

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/clusterdesk/clusterdesk/internal/labelselector"
)

// maxSelector is the longest selector text a list accepts.
const maxSelector = labelselector.MaxLen

// ParseSelector reads a label selector in kubectl -l syntax
// ("app=web,tier!=db", "env in (a,b)", "!canary") with the console's one
// selector parser (internal/labelselector). "" selects everything. The error
// says what is wrong in words a person can act on.
func ParseSelector(text string) (labels.Selector, error) {
	sel, _, err := labelselector.Parse(text)
	return sel, err
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
