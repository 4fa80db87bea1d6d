// Package ledgerview is what the auditor's ledger views compute without HTTP:
// the filter read from the URL (so the pages work without script and an
// export link carries the same view), the CSV and NDJSON rows of the
// exports, and a CSR's story told by its entries. The store is
// internal/ledger; the pages are handlers/ledger.
package ledgerview

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// Bounds of the filter's text. Nothing an auditor types is longer: a user
// name from a certificate or an OIDC claim stays well under MaxText, a signer
// name is a domain (253) and a path; an object name is a DNS subdomain (253).
// A longer value is refused rather than sent to the database.
const (
	MaxText   = 1024
	MaxName   = 253
	MaxCursor = 1024
	// maxDays bounds a duration in days ("7d"): a century is more than any
	// retention, and days*24h must not overflow.
	maxDays = 36500
)

// earliest is the earliest time a bound may name: nothing in a ledger is older
// than Kubernetes.
var earliest = time.Date(2014, 1, 1, 0, 0, 0, 0, time.UTC)

// The actions and results the filter offers, in the order the form lists them.
var (
	Actions = []string{ledger.ActionCreate, ledger.ActionUpdate, ledger.ActionDelete, ledger.ActionApprove,
		ledger.ActionDeny, ledger.ActionIssue, ledger.ActionStatus}
	Results = []string{ledger.ResultOK, ledger.ResultDenied, ledger.ResultFailed}
	Sources = []string{ledger.SourceAPIServer, ledger.SourceConsole, ledger.SourceWatch}
)

// Filter is the ledger page's filter as typed, and the store query it means.
type Filter struct {
	Kinds  []string // kind ids; none: every kind the viewer may list
	User   string
	Signer string
	// Manager is the field managers of an observed version (source watch),
	// exactly as the entry names them.
	Manager string
	Actions []string
	Result  string
	Source  string
	// SinceText and UntilText are the bounds as typed, for the form and links.
	SinceText, UntilText string
	Since, Until         time.Time
	After                string // the cursor of the page to continue from
	// ShowHousekeeping is housekeeping=show: the control plane's
	// housekeeping (ledger.HousekeepingSQL) is folded unless it is set.
	ShowHousekeeping bool
}

// HousekeepingShow is the value of housekeeping= that shows the control
// plane's housekeeping; the parameter takes no other (a misspelt one must not
// silently fold an export).
const HousekeepingShow = "show"

// Folds is whether the filter's list leaves out the control plane's
// housekeeping: by default, unless the URL asks to show it or names a user
// or a signer. A user's page must show all they did, the control plane's own
// identities included (user=system:apiserver is a question about exactly
// those entries); a signer's entries are CSRs, which are never housekeeping,
// and its query keeps the signer's index to itself; the console's writes and
// the observed versions are never housekeeping.
func (f Filter) Folds() bool { return !f.ShowHousekeeping && f.MayFold() }

// MayFold is whether the filter's list is one the fold applies to (folded or
// shown by a click): not a user's or a signer's page, and not a view of the
// console's writes or of the observed versions, which hold no housekeeping
// (it is the API server's entries only).
func (f Filter) MayFold() bool {
	apiserver := f.Source == "" || f.Source == ledger.SourceAPIServer
	return f.User == "" && f.Signer == "" && apiserver
}

// ErrBadFilter wraps every reason ParseFilter refuses a URL: the handlers
// answer it with 400 and its message.
var ErrBadFilter = errors.New("bad filter")

func bad(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadFilter, fmt.Sprintf(format, a...))
}

// ParseFilter reads kind and action (repeatable), user, signer, manager, result,
// source, since, until, housekeeping (show) and after. since and until take a
// duration back from now ("15m", "2h", "7d") or a time in UTC (parseTime).
// A value it cannot read is refused, never ignored: an auditor's export
// must never hold more than the filter said.
func ParseFilter(v url.Values, now time.Time) (Filter, error) {
	f := Filter{
		User: strings.TrimSpace(v.Get("user")), Signer: strings.TrimSpace(v.Get("signer")), Manager: strings.TrimSpace(v.Get("manager")),
		SinceText: strings.TrimSpace(v.Get("since")), UntilText: strings.TrimSpace(v.Get("until")),
		After: v.Get("after"),
	}
	for field, val := range map[string]string{"user": f.User, "signer": f.Signer, "manager": f.Manager, "since": f.SinceText, "until": f.UntilText} {
		if len(val) > MaxText {
			return Filter{}, bad("%s is %d characters long; at most %d are read", field, len(val), MaxText)
		}
	}
	if len(f.After) > MaxCursor || strings.IndexFunc(f.After, notCursor) >= 0 {
		return Filter{}, bad("the page cursor (after) is not one this console wrote; start from the first page")
	}
	var err error
	if f.Kinds, err = distinct(v["kind"], "kind", func(k string) bool { return len(k) <= 63 && k != "" }); err != nil {
		return Filter{}, err
	}
	if f.Actions, err = distinct(v["action"], "action", func(a string) bool { return slices.Contains(Actions, a) }); err != nil {
		return Filter{}, err
	}
	if f.Result, err = oneOf(v.Get("result"), "result", Results); err != nil {
		return Filter{}, err
	}
	if f.Source, err = oneOf(v.Get("source"), "source", Sources); err != nil {
		return Filter{}, err
	}
	hk, err := oneOf(v.Get("housekeeping"), "housekeeping", []string{HousekeepingShow})
	if err != nil {
		return Filter{}, err
	}
	f.ShowHousekeeping = hk == HousekeepingShow
	if f.Since, err = bound(f.SinceText, "since", now); err != nil {
		return Filter{}, err
	}
	if f.Until, err = bound(f.UntilText, "until", now); err != nil {
		return Filter{}, err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Since.Before(f.Until) {
		return Filter{}, bad("since (%s) is not before until (%s)", f.SinceText, f.UntilText)
	}
	return f, nil
}

// ParseHistory reads an object history's uid (one incarnation of the name)
// and after (the page cursor), refusing what no store or object wrote.
func ParseHistory(v url.Values) (uid, after string, err error) {
	uid, after = strings.TrimSpace(v.Get("uid")), v.Get("after")
	if len(uid) > 128 || strings.IndexFunc(uid, notCursor) >= 0 {
		return "", "", bad("uid %q is not an object's uid", clip(uid))
	}
	if len(after) > MaxCursor || strings.IndexFunc(after, notCursor) >= 0 {
		return "", "", bad("the page cursor (after) is not one this console wrote; start from the first page")
	}
	return uid, after, nil
}

// notCursor is a character no cursor or uid holds: cursors are printable
// ASCII without spaces.
func notCursor(r rune) bool { return r < 0x21 || r > 0x7e }

func distinct(vals []string, field string, ok func(string) bool) ([]string, error) {
	var out []string
	for _, s := range vals {
		if s = strings.TrimSpace(s); s == "" || slices.Contains(out, s) {
			continue
		}
		if !ok(s) {
			return nil, bad("%s %q is not one this ledger knows", field, clip(s))
		}
		out = append(out, s)
	}
	return out, nil
}

func oneOf(s, field string, known []string) (string, error) {
	if s = strings.TrimSpace(s); s == "" || slices.Contains(known, s) {
		return s, nil
	}
	return "", bad("%s %q is not one of %s", field, clip(s), strings.Join(known, ", "))
}

// bound reads since or until, refusing times before Kubernetes or more than a
// day ahead: those are typing mistakes, and a database asked for year 99999
// answers with an error, not an empty page.
func bound(s, field string, now time.Time) (time.Time, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		if days, err := strconv.Atoi(n); err == nil && days > maxDays {
			return time.Time{}, bad("%s: %s days is more than a century", field, n)
		}
	}
	t, err := parseTime(s, now)
	if err != nil {
		return time.Time{}, bad("%s: %v", field, err)
	}
	if s != "" && (t.Before(earliest) || t.After(now.Add(24*time.Hour))) {
		return time.Time{}, bad("%s: %s is outside the ledger's time (2014 until tomorrow)", field, clip(s))
	}
	return t, nil
}

// clip shortens a refused value for the message that quotes it.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Query is the store query of the filter, limited to kinds (the kinds the
// viewer may list: never nil, so that a viewer who may list none sees none).
func (f Filter) Query(kinds []string, limit int) ledger.Query {
	q := ledger.Query{User: f.User, Signer: f.Signer, Manager: f.Manager, Actions: f.Actions, Result: f.Result, Source: f.Source,
		Since: f.Since, Until: f.Until, After: f.After, Limit: limit, Kinds: []string{}, FoldHousekeeping: f.Folds(),
		// Each version once (the richer record), unless the observed versions
		// themselves are asked for: then every one the watch saw.
		OnePerVersion: f.Source != ledger.SourceWatch}
	for _, k := range kinds {
		if len(f.Kinds) == 0 || slices.Contains(f.Kinds, k) {
			q.Kinds = append(q.Kinds, k)
		}
	}
	return q
}

// Values is the filter as URL parameters, without the cursor: the export
// links and the first page carry it.
func (f Filter) Values() url.Values {
	v := url.Values{}
	for _, k := range f.Kinds {
		v.Add("kind", k)
	}
	for _, a := range f.Actions {
		v.Add("action", a)
	}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("user", f.User)
	set("signer", f.Signer)
	set("manager", f.Manager)
	set("result", f.Result)
	set("source", f.Source)
	set("since", f.SinceText)
	set("until", f.UntilText)
	if f.ShowHousekeeping {
		v.Set("housekeeping", HousekeepingShow)
	}
	return v
}
