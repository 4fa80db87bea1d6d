package page

import (
	"net/http"

	"github.com/clusterdesk/clusterdesk/internal/present"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// LintStatus answers 400 for a lint= value the kind's list does not know
// (present.LintFilterError): the page still renders, saying why, with no
// rows, whatever state the list is in, as SelectorStatus does for a label
// selector that does not parse.
func LintStatus(page *model.ListPage, q present.ListQuery, status int) int {
	if q.LintErr == nil {
		return status
	}
	page.LintError = q.LintErr.Error()
	if status == http.StatusOK {
		return http.StatusBadRequest
	}
	return status
}
