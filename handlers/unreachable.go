package handlers

import (
	"github.com/clusterdesk/clusterdesk/handlers/page"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// unreachablePage is page.Unreachable: the 503 page of an API server that
// could not be reached; the feature packages share it (handlers/csrs).
func unreachablePage(err error) (model.ErrorPage, bool) { return page.Unreachable(err) }
