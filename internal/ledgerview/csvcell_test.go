package ledgerview

import (
	"testing"
	"time"
)

// (Was internal/activity's test: the one CSV export neutralises cells.)
func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://x\")": "'=HYPERLINK(\"http://x\")",
		"+1":                       "'+1",
		"-2+3":                     "'-2+3",
		"@SUM(A1)":                 "'@SUM(A1)",
		"\t=1":                     "'\t=1",
		"\r=1":                     "'\r=1",
		"kubectl":                  "kubectl",
		"":                         "",
		"a=b":                      "a=b",
		// The first non-blank character counts: spreadsheets skip the blanks.
		" =cmd|' /C calc'!A0": "' =cmd|' /C calc'!A0",
		"   +1":               "'   +1",
		"\n@SUM(A1)":          "'\n@SUM(A1)",
		"\u00a0-1":            "'\u00a0-1",
		"  kubectl":           "  kubectl",
		"   ":                 "   ",
	} {
		if got := CSVCell(in); got != want {
			t.Errorf("CSVCell(%q) = %q, want %q", in, got, want)
		}
	}
}

// since and until take a duration back from now or a time in UTC, as the
// browser's datetime-local sends it.
func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                  {},
		"2h":                now.Add(-2 * time.Hour),
		"7d":                now.Add(-7 * 24 * time.Hour),
		"2026-11-22T11:30":  time.Date(2026, 11, 22, 11, 30, 0, 0, time.UTC),
		"2026-11-22":        time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
		"2026-11-22T11:30Z": {},
	} {
		got, err := parseTime(in, now)
		if in == "2026-11-22T11:30Z" {
			if err == nil {
				t.Errorf("parseTime(%q) read %v", in, got)
			}
			continue
		}
		if err != nil || !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := parseTime("yesterday", now); err == nil {
		t.Error("yesterday was read")
	}
}
