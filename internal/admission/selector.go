package admission

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// NamespaceNameLabel is the label the API server puts on every namespace with
// its own name (Kubernetes 1.22+): the one label a lint can count on.
const NamespaceNameLabel = "kubernetes.io/metadata.name"

// selectorMatches reports whether sel selects an object with labels set. A nil
// or empty selector selects everything, as the API server defaults it to {}.
// An invalid selector selects nothing (the API server would have refused it).
func selectorMatches(sel *metav1.LabelSelector, set map[string]string) bool {
	if sel == nil {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set(set))
}

// SelectorText formats a selector as kubectl does, with "everything" for the
// empty selector a webhook defaults to.
func SelectorText(sel *metav1.LabelSelector) string {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return "everything"
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "invalid: " + err.Error()
	}
	return s.String()
}

// reachesNamespace reports whether h is called for unlabelled objects in the
// namespace ns, judging ns by its automatic name label only. An object
// selector that needs a label makes the webhook opt-in per object.
func (h Hook) reachesNamespace(ns string) bool {
	return selectorMatches(h.NamespaceSelector, map[string]string{NamespaceNameLabel: ns}) &&
		selectorMatches(h.ObjectSelector, nil)
}
