package editing

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParsePropagation(t *testing.T) {
	for in, want := range map[string]metav1.DeletionPropagation{
		"":           metav1.DeletePropagationBackground,
		"Background": metav1.DeletePropagationBackground,
		"Foreground": metav1.DeletePropagationForeground,
		"Orphan":     metav1.DeletePropagationOrphan,
	} {
		if got, err := ParsePropagation(in); err != nil || got != want {
			t.Errorf("%q: %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"orphan", "Cascade", "true", " Background"} {
		if got, err := ParsePropagation(bad); err == nil {
			t.Errorf("%q accepted as %q", bad, got)
		}
	}
}
