package ledger

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/urls"
)

// The in-memory activity view is gone (issue 44: one history stack): the
// versions the watch observes are ledger entries (source watch). Its URLs,
// in bookmarks and old links, redirect to the ledger's equivalents with the
// same filter, so nothing behind them answers anything the ledger's pages
// would not (the redirect's target checks the viewer's kinds itself).

// activityRedirect answers /activity, .csv and .json with the ledger's page
// of observed versions, or its CSV or NDJSON export. The activity view's
// kind, since and until carry over as they are; who (a substring of a user
// or field manager) becomes the ledger's manager (exact: the observed
// versions name field managers, the writes' entries their users); source is
// the watch (the activity view's managedFields rows are on each object's
// history).
func activityRedirect(target string) echo.HandlerFunc {
	return func(c echo.Context) error {
		in := c.QueryParams()
		out := url.Values{"source": {ledger.SourceWatch}}
		for _, k := range []string{"kind", "since", "until"} {
			if vals, ok := in[k]; ok {
				out[k] = vals
			}
		}
		if who := strings.TrimSpace(in.Get("who")); who != "" {
			out.Set("manager", who)
		}
		to := target
		if to == urls.Activity { // the page, or its export by ?format=
			switch in.Get("format") {
			case "csv":
				to = urls.LedgerCSV
			case "json":
				to = urls.LedgerNDJSON
			default:
				to = urls.Ledger
			}
		}
		return c.Redirect(http.StatusFound, urls.WithQuery(to, out))
	}
}

// historyRedirect answers an object's old history URL with its one
// history; ofKind checked the :kind first, as for every kind route.
func (h *Handlers) historyRedirect(c echo.Context) error {
	k, err := h.d.Kind(c)
	if err != nil {
		return err
	}
	target := urls.LedgerObject(k.ID, c.Param("name"), "")
	switch f := c.QueryParam("format"); f {
	case "csv":
		target += "?format=csv"
	case "json":
		target += "?format=ndjson"
	}
	return c.Redirect(http.StatusFound, target)
}
