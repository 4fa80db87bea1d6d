package present

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
