package faults

import (
	"strings"
	"testing"
)

func TestWithLabel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"apiVersion: v1\nmetadata:\n  name: x\nspec: {}\n", "apiVersion: v1\nmetadata:\n  labels:\n    faults-editor: v\n  name: x\nspec: {}\n"},
		{"metadata:\n  labels:\n    a: b\n  name: x\n", "metadata:\n  labels:\n    faults-editor: v\n    a: b\n  name: x\n"},
		{"metadata:\n  labels:\n    faults-editor: old\n  name: x\n", "metadata:\n  labels:\n    faults-editor: v\n  name: x\n"},
	} {
		if got := withLabel(tc.in, "v"); got != tc.want {
			t.Errorf("withLabel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// withLabel puts the faults-editor label into a CSIDriver's editor text.
func withLabel(yaml, value string) string {
	lines := strings.Split(yaml, "\n")
	out := make([]string, 0, len(lines)+2)
	for _, l := range lines {
		if strings.HasPrefix(l, "    faults-editor: ") {
			continue // the previous writer's value
		}
		out = append(out, l)
		switch l {
		case "metadata:":
			if !strings.Contains(yaml, "\n  labels:\n") {
				out = append(out, "  labels:", "    faults-editor: "+value)
			}
		case "  labels:":
			out = append(out, "    faults-editor: "+value)
		}
	}
	return strings.Join(out, "\n")
}
