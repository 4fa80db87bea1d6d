package labelselector

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

func TestParseSelects(t *testing.T) {
	for _, tc := range []struct {
		text string
		set  labels.Set
		want bool
	}{
		{"", labels.Set{"any": "x"}, true},
		{"  app=web  ", labels.Set{"app": "web"}, true},
		{"app=web,tier!=db", labels.Set{"app": "web", "tier": "db"}, false},
		{"env in (a,b)", labels.Set{"env": "b"}, true},
		{"!canary", labels.Set{"canary": ""}, false},
	} {
		sel, text, err := Parse(tc.text)
		if err != nil || text != strings.TrimSpace(tc.text) || sel.Matches(tc.set) != tc.want {
			t.Errorf("%q: text %q err %v matches %v", tc.text, text, err, sel != nil && sel.Matches(tc.set))
		}
	}
}

func TestParseRefusesInWords(t *testing.T) {
	for _, bad := range []string{"app=(", "app=web,", "app in (", "a b c", "=x", strings.Repeat("k", MaxLen+1)} {
		sel, _, err := Parse(bad)
		var e *Error
		if sel != nil || !errors.As(err, &e) {
			t.Errorf("%q: selector %v, error %v", bad, sel, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "label selector") {
			t.Errorf("%q: %q", bad, msg)
		}
	}
}
