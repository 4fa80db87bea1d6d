package components

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestBreakSegments(t *testing.T) {
	for text, want := range map[string][]string{
		"kubernetes.io/kube-apiserver-client": {"kubernetes.", "io/", "kube-apiserver-client"},
		"PriorityLevelConfigurations":         {"Priority", "Level", "Configurations"},
		"system:node:worker-1":                {"system:", "node:", "worker-1"},
		"workload-low":                        {"workload-low"},
		"ends.":                               {"ends."},
		"":                                    {""},
		"a.b":                                 {"a.", "b"},
		"ÉtéÉté/x":                            {"Été", "Été/", "x"},
	} {
		got := breakSegments(text)
		if !slices.Equal(got, want) || strings.Join(got, "") != text {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
}

// TestBreakHintsEscapes: the text is escaped; only the hints are markup.
func TestBreakHintsEscapes(t *testing.T) {
	var b strings.Builder
	if err := BreakHints(`<script>.x/"y"`).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), `&lt;script&gt;.<wbr>x/<wbr>&#34;y&#34;`; got != want {
		t.Errorf("%s, want %s", got, want)
	}
}
