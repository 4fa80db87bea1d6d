package page

import (
	"net/http"

	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// SelectorStatus keeps a list's label selector on its page whatever state the
// list is in (forbidden and loading pages keep the filter bar as typed), and
// answers 400 for a selector that does not parse: the page still renders, with
// the parse error beside the filter bar and no rows.
func SelectorStatus(page *model.ListPage, q present.ListQuery, status int) int {
	page.Selector = q.Selector
	if q.SelectorErr == nil {
		return status
	}
	page.SelectorError = q.SelectorErr.Error()
	if status == http.StatusOK {
		return http.StatusBadRequest
	}
	return status
}
