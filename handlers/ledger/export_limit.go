package ledger

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
)

// ExportLimits bound the ledger's exports (issue 43): an export is a long
// response, and a client that opens many and reads none must not take the
// console's bandwidth, memory or the store's connections (the store reads an
// export in keyset pages with a budget of its own: internal/ledger).
type ExportLimits struct {
	// PerUser and Total bound the exports running at once, for one user and
	// for everybody; one more is refused with 429 and Retry-After.
	PerUser, Total int
	// Stall is how long one write of an export may wait for the client to
	// take it (the write deadline, renewed as the rows go out): a client that
	// stops reading is cut off, its connection closed and its export ended.
	Stall time.Duration
}

// DefaultExportLimits: two exports per user (a page's CSV and NDJSON at
// once), eight in all, and 30 s for a client to take a write: a browser
// saving a download reads continuously; one that stops for 30 s has left.
var DefaultExportLimits = ExportLimits{PerUser: 2, Total: 8, Stall: 30 * time.Second}

// exportRetryAfter is the Retry-After of a refused export, in seconds.
const exportRetryAfter = 30

// exportGate counts the exports running, per user and in all. byUser holds
// only users with an export running, so it is bounded by Total.
type exportGate struct {
	limits ExportLimits
	mu     sync.Mutex
	total  int
	byUser map[string]int
}

func newExportGate(l ExportLimits) *exportGate {
	d := DefaultExportLimits
	if l.PerUser <= 0 {
		l.PerUser = d.PerUser
	}
	if l.Total <= 0 {
		l.Total = d.Total
	}
	if l.Stall <= 0 {
		l.Stall = d.Stall
	}
	return &exportGate{limits: l, byUser: map[string]int{}}
}

// enter takes an export's place for user, or refuses it with 429 saying
// which bound it met; leave gives the place back.
func (g *exportGate) enter(c echo.Context, user string) (leave func(), err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var msg string
	switch {
	case g.byUser[user] >= g.limits.PerUser:
		msg = "You have " + strconv.Itoa(g.limits.PerUser) + " ledger exports running already; " +
			"wait for one to finish (or cancel it) before starting another."
	case g.total >= g.limits.Total:
		msg = "The console is running " + strconv.Itoa(g.limits.Total) + " ledger exports already, " +
			"its limit; try again in a minute."
	}
	if msg != "" {
		c.Response().Header().Set("Retry-After", strconv.Itoa(exportRetryAfter))
		return nil, echo.NewHTTPError(http.StatusTooManyRequests, msg)
	}
	g.total++
	g.byUser[user]++
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.total--
		if g.byUser[user]--; g.byUser[user] == 0 {
			delete(g.byUser, user)
		}
	}, nil
}
