package admission

import (
	"math"
	"testing"
)

func TestLintHealth(t *testing.T) {
	hook := Hook{Name: "h", TimeoutSeconds: 10}
	cases := []struct {
		name string
		m    Health
		want []string
	}{
		{"healthy", Health{P99: 0.02}, nil},
		{"no calls", Health{P99: math.NaN()}, nil},
		{"failed open", Health{FailedOpen: 3, P99: 0.02}, []string{CodeFailedOpen}},
		{"at 80% is not slow", Health{P99: 8}, nil},
		{"above 80% is slow", Health{P99: 8.5}, []string{CodeSlow}},
		{"both", Health{FailedOpen: 1, P99: 9.9}, []string{CodeFailedOpen, CodeSlow}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := LintHealth(hook, c.m)
			if len(got) != len(c.want) {
				t.Fatalf("got %+v, want codes %v", got, c.want)
			}
			for i := range got {
				if got[i].Code != c.want[i] {
					t.Errorf("finding %d = %s, want %s", i, got[i].Code, c.want[i])
				}
			}
		})
	}
}
