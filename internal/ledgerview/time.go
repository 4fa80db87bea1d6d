package ledgerview

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// timeLayouts are what the since and until fields accept besides a duration:
// the browser's datetime-local value (taken as UTC) and RFC 3339.
var timeLayouts = []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"}

// parseTime reads one since or until value: "" is the zero time, a
// duration ("15m", "2h", "7d") is that long before now, else a time in UTC
// (RFC 3339, or "2006-01-02T15:04" as the browser's datetime-local sends it).
func parseTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, ok := parseDuration(s); ok {
		return now.Add(-d).UTC(), nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a time (2006-01-02T15:04, UTC) nor a duration (15m, 2h, 7d)", s)
}

// parseDuration reads Go durations and whole days ("7d").
func parseDuration(s string) (time.Duration, bool) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		return time.Duration(days) * 24 * time.Hour, err == nil && days >= 0
	}
	d, err := time.ParseDuration(s)
	return d, err == nil && d >= 0
}
