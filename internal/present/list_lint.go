package present

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// lintFilter is one value of a list's lint= filter: which rows it keeps
// and how the page words it ("filtered: with stored-version drift").
type lintFilter struct {
	words string
	keeps func(admission.Tally) bool
}

// lintFilters are the lint= values each kind's list understands. The home
// page's attention items link to them (internal/attention): the webhook
// configurations with danger lints, the CRDs with stored-version drift.
var lintFilters = map[string]map[string]lintFilter{
	"crds": {
		urls.LintDrift:  {"with stored-version drift", func(t admission.Tally) bool { return t.Marked }},
		urls.LintDanger: dangerFilter,
	},
	"validatingwebhooks": {urls.LintDanger: dangerFilter},
	"mutatingwebhooks":   {urls.LintDanger: dangerFilter},
}

var dangerFilter = lintFilter{"with danger lints", func(t admission.Tally) bool { return t.Errors > 0 }}

// LintFilterError says why value is not a lint filter of the kind's list
// (the page answers 400 with it and shows no rows), or nil for "" and the
// values lintFilters lists.
func LintFilterError(kindID, value string) error {
	if value == "" {
		return nil
	}
	known := lintFilters[kindID]
	if _, ok := known[value]; ok {
		return nil
	}
	if len(known) == 0 {
		return fmt.Errorf("this list has no lint filter (lint=%q)", value)
	}
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	slices.Sort(names)
	return fmt.Errorf("lint=%q is not a filter of this list; it knows lint=%s", value, strings.Join(names, ", lint="))
}

// lintKeeps reports whether the query's lint filter keeps the row (no
// filter keeps every row; a filter LintFilterError refused keeps none).
func lintKeeps(kindID string, q ListQuery, r row) bool {
	if q.Lint == "" {
		return true
	}
	f, ok := lintFilters[kindID][q.Lint]
	return ok && q.LintErr == nil && f.keeps(r.lints)
}

// lintWords is how the page names the filter ("with danger lints").
func lintWords(kindID, value string) string {
	if f, ok := lintFilters[kindID][value]; ok {
		return f.words
	}
	return "lint=" + value
}

// withoutLint is the view's URL without its lint filter: the note's
// "clear" link keeps the text filter, selector and sort.
func withoutLint(action string, view url.Values) string {
	v := cloneValues(view)
	v.Del("lint")
	v.Del("page")
	if enc := v.Encode(); enc != "" {
		return action + "?" + enc
	}
	return action
}
