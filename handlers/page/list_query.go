package page

import (
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/clusterdesk/clusterdesk/internal/labelselector"
	"github.com/clusterdesk/clusterdesk/internal/present"
)

// The list pages' query, read here, in the page layer, from the request:
// the presenters take it as plain data (present.ListQuery) and never read a
// request themselves.

// ParseListQuery reads q, selector, lint, sort, dir and page from a URL query.
// Unknown sort keys are kept here and ignored by the presenter's table (name
// order is the fallback).
func ParseListQuery(v url.Values) present.ListQuery {
	q := present.ListQuery{
		Filter:   strings.TrimSpace(v.Get("q")),
		Selector: strings.TrimSpace(v.Get("selector")),
		Lint:     strings.TrimSpace(v.Get("lint")),
		Sort:     v.Get("sort"),
		Desc:     v.Get("dir") == "desc",
		Page:     ParsePage(v),
	}
	q.Labels, q.SelectorErr = ParseSelector(q.Selector)
	return q
}

// ParseSelector reads a label selector in kubectl -l syntax
// ("app=web,tier!=db", "env in (a,b)", "!canary") with the console's one
// selector parser (internal/labelselector). "" selects everything. The error
// says what is wrong in words a person can act on.
func ParseSelector(text string) (labels.Selector, error) {
	sel, _, err := labelselector.Parse(text)
	return sel, err
}

// ParsePage reads page=N (1-based); anything else is 0, the first page.
func ParsePage(v url.Values) int {
	n, err := strconv.Atoi(v.Get("page"))
	if err != nil || n < 1 {
		return 0
	}
	return n
}
