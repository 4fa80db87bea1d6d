package activity

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Query is the activity view's filter, from the URL so that it works without
// script and an export link carries the same view.
type Query struct {
	Kinds  []string  // kind ids; none means every kind the user may list
	Who    string    // substring of the user or field manager, case-insensitive
	Source string    // SourceWatch, SourceManagedFields or "" for both
	Since  time.Time // zero: no lower bound
	Until  time.Time // zero: no upper bound
	// SinceText and UntilText are the inputs as typed, for the form.
	SinceText, UntilText string
}

// timeLayouts are what the since and until fields accept besides a duration:
// the browser's datetime-local value (taken as UTC) and RFC 3339.
var timeLayouts = []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"}

// ParseQuery reads kind (repeatable), who, source, since and until. since and
// until take a time (RFC 3339, or "2006-01-02T15:04" in UTC) or a duration
// back from now ("15m", "2h", "7d"). It returns a problem per unreadable value,
// which is then ignored.
func ParseQuery(v url.Values, now time.Time) (Query, []string) {
	q := Query{Who: strings.TrimSpace(v.Get("who")), SinceText: strings.TrimSpace(v.Get("since")), UntilText: strings.TrimSpace(v.Get("until"))}
	for _, k := range v["kind"] {
		if k = strings.TrimSpace(k); k != "" && !slices.Contains(q.Kinds, k) {
			q.Kinds = append(q.Kinds, k)
		}
	}
	switch s := v.Get("source"); s {
	case SourceWatch, SourceManagedFields:
		q.Source = s
	}
	var problems []string
	var err error
	if q.Since, err = parseTime(q.SinceText, now); err != nil {
		problems = append(problems, "since: "+err.Error())
	}
	if q.Until, err = parseTime(q.UntilText, now); err != nil {
		problems = append(problems, "until: "+err.Error())
	}
	return q, problems
}

// ParseTime reads one since or until value as ParseQuery does: "" is the
// zero time, a duration is that long before now, else a time in UTC. The
// ledger's views (internal/ledgerview) take the same input.
func ParseTime(s string, now time.Time) (time.Time, error) { return parseTime(s, now) }

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

// Match reports whether e passes the filter.
func (q Query) Match(e Entry) bool {
	if len(q.Kinds) > 0 && !slices.Contains(q.Kinds, e.Kind) {
		return false
	}
	if q.Source != "" && e.Source != q.Source {
		return false
	}
	if q.Who != "" {
		who := strings.ToLower(q.Who)
		if !strings.Contains(strings.ToLower(e.User), who) && !strings.Contains(strings.ToLower(e.Manager), who) {
			return false
		}
	}
	if !q.Since.IsZero() && e.Time.Before(q.Since) {
		return false
	}
	if !q.Until.IsZero() && e.Time.After(q.Until) {
		return false
	}
	return true
}

// Values is the query as URL parameters, for export links.
func (q Query) Values() url.Values {
	v := url.Values{}
	for _, k := range q.Kinds {
		v.Add("kind", k)
	}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("who", q.Who)
	set("source", q.Source)
	set("since", q.SinceText)
	set("until", q.UntilText)
	return v
}

// Filter returns the entries that pass q, and whose kind allowed accepts,
// sorted newest first (ties: watch entries by observation order, then kind
// and name).
func Filter(entries []Entry, q Query, allowed func(kind string) bool) []Entry {
	var out []Entry
	for _, e := range entries {
		if allowed(e.Kind) && q.Match(e) {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b Entry) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		if a.Seq != b.Seq {
			if a.Seq > b.Seq {
				return -1
			}
			return 1
		}
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}
