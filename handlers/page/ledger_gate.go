package page

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
)

// LedgerReaders says who reads what the ledger's database holds of people's
// activity: its entries (the ledger pages, an object's history, the exports,
// a CSR approval policy's decisions), the recorded writes (the replay) and
// the recorded traffic (the APF what-if). Issue 48's roles by job: without a
// gate of its own, anyone who may list a kind reads who did what to it.
type LedgerReaders string

const (
	// LedgerReadersListers is the binary's default (an upgrade of a plain
	// binary changes nothing): the ledger answers anyone for the kinds they
	// may list, the replay for the resources they may list, the what-if
	// anyone who may list FlowSchemas and priority levels.
	LedgerReadersListers LedgerReaders = "listers"
	// LedgerReadersGranted asks, besides, that the API server allows the
	// user LedgerGrant: RBAC may name a resource the API server does not
	// serve, so a ClusterRole grants it as any other (the chart's auditor).
	LedgerReadersGranted LedgerReaders = "granted"
)

// ParseLedgerReaders reads --ledger-readers; "" is the default.
func ParseLedgerReaders(s string) (LedgerReaders, error) {
	switch r := LedgerReaders(s); r {
	case "", LedgerReadersListers:
		return LedgerReadersListers, nil
	case LedgerReadersGranted:
		return r, nil
	}
	return "", fmt.Errorf("%q is neither %q nor %q", s, LedgerReadersListers, LedgerReadersGranted)
}

// The grant LedgerReadersGranted asks for: verb get on resource ledger in
// API group clusterdesk.io (cluster-wide, no name).
const (
	LedgerGrantVerb     = "get"
	LedgerGrantGroup    = "clusterdesk.io"
	LedgerGrantResource = "ledger"
)

// LedgerGrantWords says which grant is missing, for the 403 page and for
// the sections that leave the ledger's data out.
const LedgerGrantWords = "Reading the ledger (who changed what, the recorded writes and the recorded traffic) needs a grant " +
	"of its own on this console (--ledger-readers granted): verb \"get\" on resource \"ledger\" in API group " +
	"\"clusterdesk.io\". Your identity does not have it. Ask your cluster's administrators for a ClusterRole with " +
	"that rule, such as the Helm chart's auditor role."

// LedgerGrantUnchecked is what a refused user reads when the access review
// itself failed (API server unreachable): the ledger is not shown unasked.
const LedgerGrantUnchecked = "Reading the ledger needs verb \"get\" on resource \"ledger\" in API group \"clusterdesk.io\" " +
	"(--ledger-readers granted), and the API server could not be asked whether your identity has it; try again shortly."

// LedgerRefusal is nil when the signed-in user may read the ledger's data,
// else why not: with LedgerReadersGranted, an access review as the user
// (through Access, cached like every other answer), never anything the
// request says. A failed review refuses (the data is not the shared
// cache's, which local mode's failure rule is about).
func (r Rights) LedgerRefusal(c echo.Context) string {
	if r.LedgerReaders != LedgerReadersGranted {
		return ""
	}
	if r.Access == nil {
		return LedgerGrantWords
	}
	ok, err := r.Access.Can(c.Request().Context(), LedgerGrantVerb, LedgerGrantGroup, LedgerGrantResource, "", "")
	switch {
	case err != nil:
		r.Log.Warn("access review failed", "check", "get clusterdesk.io/ledger", "err", err)
		return LedgerGrantUnchecked
	case !ok:
		return LedgerGrantWords
	}
	return ""
}

// LedgerRefusalFunc is Rights.LedgerRefusal as the features take it; nil
// refuses nobody.
type LedgerRefusalFunc func(c echo.Context) string

// Of is the refusal of the request's user, "" when nil or allowed.
func (f LedgerRefusalFunc) Of(c echo.Context) string {
	if f == nil {
		return ""
	}
	return f(c)
}

// Require is the route middleware of every route that reads the ledger's
// data: a refused user gets 403 with the page saying which grant is
// missing, before the handler runs.
func (f LedgerRefusalFunc) Require(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if why := f.Of(c); why != "" {
			return echo.NewHTTPError(http.StatusForbidden, why)
		}
		return next(c)
	}
}
