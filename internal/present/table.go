// Package present turns Kubernetes objects into the view models in views/model:
// status text, ages and badges are decided here, in tested Go, not in templates.
package present

import (
	"net/url"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/clusterdesk/clusterdesk/internal/admission"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// column describes one list column.
type column struct {
	Key      string
	Label    string
	Sortable bool
}

// row is a list row plus the values its columns sort by (an age sorts by
// timestamp, not by its "3d4h" text).
type row struct {
	model.Row
	sortKeys []string        // one per column
	search   string          // lower-cased text the filter matches against
	lints    admission.Tally // the lints column's counts, for the lint= filter (list_lint.go)
}

// ListQuery is what the browser asked of a list: filter text, sort order and
// page.
type ListQuery struct {
	Filter string
	Sort   string
	Desc   bool
	Page   int // 1-based; 0 is the first page
	// Selector is the label selector as typed (selector=, kubectl -l syntax);
	// Labels is it parsed (nil: every object), or SelectorErr says why it
	// could not be, and the list then shows no rows (selector.go). The page
	// layer reads all of it from the request (handlers/page.ParseListQuery).
	Selector    string
	Labels      labels.Selector
	SelectorErr error
	// Lint is the lint= filter (list_lint.go: lint=drift on the CRD list,
	// lint=danger on the webhook configuration lists); LintErr, set by the
	// handler from LintFilterError, says why it is not one of the kind's,
	// and the list then shows no rows.
	Lint    string
	LintErr error
}

// Selects reports whether the query's label selector keeps an object with
// these labels; a selector that did not parse keeps nothing.
func (q ListQuery) Selects(set map[string]string) bool {
	if q.SelectorErr != nil {
		return false
	}
	return q.Labels == nil || q.Labels.Matches(labels.Set(set))
}

// table filters and sorts every row, then lays out one page of them into a
// ListPage (without Chrome).
func table(kindID, title, action string, cols []column, rows []row, q ListQuery) model.ListPage {
	sortIdx := 0
	for i, c := range cols {
		if c.Key == q.Sort && c.Sortable {
			sortIdx = i
		}
	}
	if sortIdx == 0 {
		q.Sort = cols[0].Key
	}

	needle := strings.ToLower(q.Filter)
	kept := make([]row, 0, len(rows))
	for _, r := range rows {
		if (needle == "" || strings.Contains(r.search, needle)) && lintKeeps(kindID, q, r) {
			kept = append(kept, r)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool {
		a, b := kept[i].sortKeys[sortIdx], kept[j].sortKeys[sortIdx]
		if a == b {
			return kept[i].Name < kept[j].Name
		}
		if q.Desc {
			return a > b
		}
		return a < b
	})

	page := model.ListPage{
		KindID:   kindID,
		Title:    title,
		Action:   action,
		Query:    q.Filter,
		Selector: q.Selector,
		Sort:     q.Sort,
		Desc:     q.Desc,
		Total:    len(rows),
		Shown:    len(kept),
	}
	view := url.Values{}
	if q.Filter != "" {
		view.Set("q", q.Filter)
	}
	if q.Selector != "" {
		view.Set("selector", q.Selector)
	}
	if q.Lint != "" {
		view.Set("lint", q.Lint)
		page.LintFilter, page.LintWords, page.LintClearHref = q.Lint, lintWords(kindID, q.Lint), withoutLint(action, view)
	}
	if q.Sort != cols[0].Key || q.Desc {
		view.Set("sort", q.Sort)
		if q.Desc {
			view.Set("dir", "desc")
		}
	}
	lo, hi, pager := paginate(q.Page, PageSize, len(kept), func(n int) string { return withPage(action, view, n) })
	page.Pager, page.View = pager, withPage(action, view, pager.Page)
	for i, c := range cols {
		mc := model.Column{Key: c.Key, Label: c.Label, Sortable: c.Sortable, Priority: columnPriority(kindID, c.Key)}
		if c.Sortable {
			desc := false
			if i == sortIdx {
				mc.Sorted = "asc"
				if q.Desc {
					mc.Sorted = "desc"
				} else {
					desc = true // clicking the sorted column flips it
				}
			}
			mc.SortHref = listHref(action, q, c.Key, desc)
		}
		page.Columns = append(page.Columns, mc)
	}
	for _, r := range kept[lo:hi] {
		prioritize(page.Columns, r.Cells)
		page.Rows = append(page.Rows, r.Row)
	}
	switch {
	case q.SelectorErr != nil:
		page.SelectorError = q.SelectorErr.Error()
		page.Empty = "Correct the label selector to see " + title + "."
	case q.LintErr != nil:
		page.LintError = q.LintErr.Error()
		page.Empty = "Correct or clear the lint filter to see " + title + "."
	case len(rows) == 0 && q.Selector != "":
		page.Empty = "No " + title + " have labels that match \u201c" + q.Selector + "\u201d."
	case len(rows) == 0:
		page.Empty = "There are no " + title + " in this cluster."
	case len(kept) == 0 && q.Lint != "" && q.Filter == "":
		page.Empty = "No " + title + " " + lintWords(kindID, q.Lint) + "."
	case len(kept) == 0:
		page.Empty = "No " + title + " match \u201c" + q.Filter + "\u201d."
	}
	return page
}

func listHref(action string, q ListQuery, sortKey string, desc bool) string {
	v := url.Values{}
	if q.Filter != "" {
		v.Set("q", q.Filter)
	}
	if q.Selector != "" {
		v.Set("selector", q.Selector)
	}
	if q.Lint != "" {
		v.Set("lint", q.Lint)
	}
	v.Set("sort", sortKey)
	if desc {
		v.Set("dir", "desc")
	}
	return action + "?" + v.Encode()
}

// newRow builds a row; the first cell is the object name, linked to its page.
func newRow(kindID, action, name string, cells []model.Cell, sortKeys []string) row {
	all := append([]model.Cell{{Text: name, Mono: true}}, cells...)
	keys := append([]string{name}, sortKeys...)
	var sb strings.Builder
	for _, c := range all {
		sb.WriteString(strings.ToLower(c.Text))
		sb.WriteByte(' ')
		for _, b := range c.Badges {
			sb.WriteString(strings.ToLower(b.Text))
			sb.WriteByte(' ')
		}
	}
	return row{
		Row: model.Row{
			ID:    "row-" + kindID + "-" + name,
			Name:  name,
			Href:  urls.Object(kindID, name),
			Cells: all,
		},
		sortKeys: keys,
		search:   sb.String(),
	}
}
