package editing

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Propagations are the garbage collector's choices for the objects a deleted
// object owns (their metadata.ownerReferences name it), in the order a page
// offers them; the first is the default. Any object can be an owner, so every
// deletion offers them. Upstream: k8s.io/apimachinery/pkg/apis/meta/v1
// types.go (DeletionPropagation) and the garbage collector,
// kubernetes/pkg/controller/garbagecollector/garbagecollector.go.
var Propagations = []metav1.DeletionPropagation{
	metav1.DeletePropagationBackground,
	metav1.DeletePropagationForeground,
	metav1.DeletePropagationOrphan,
}

// ParsePropagation reads a form's propagation choice: "" is the default
// (Background, as kubectl); anything not one of Propagations is refused.
func ParsePropagation(s string) (metav1.DeletionPropagation, error) {
	if s == "" {
		return Propagations[0], nil
	}
	for _, p := range Propagations {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q is not a propagation policy: choose Background, Foreground or Orphan", s)
}
