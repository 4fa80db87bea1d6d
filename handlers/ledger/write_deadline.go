package ledger

import (
	"net/http"
	"time"
)

// writeDeadline keeps a streamed response's write deadline stall ahead of
// the rows going out, so a write the client does not take within stall
// fails and net/http closes the connection. The console's server has no
// WriteTimeout (event streams stay open for hours: handlers/server.go), so
// the export sets its own, and clears it when done: a keep-alive
// connection's next request must not inherit it.
type writeDeadline struct {
	rc      *http.ResponseController
	stall   time.Duration
	renewed time.Time
}

func newWriteDeadline(w http.ResponseWriter, stall time.Duration) *writeDeadline {
	d := &writeDeadline{rc: http.NewResponseController(w), stall: stall}
	d.set(time.Now())
	return d
}

// renew moves the deadline stall ahead, at most every quarter of stall (a
// timer reset per row would be wasted: the window is stall minus that).
func (d *writeDeadline) renew() {
	if now := time.Now(); now.Sub(d.renewed) >= d.stall/4 {
		d.set(now)
	}
}

// set ignores http.ErrNotSupported: a writer without deadlines (a test's
// recorder) has no client to stall it.
func (d *writeDeadline) set(now time.Time) {
	d.renewed = now
	_ = d.rc.SetWriteDeadline(now.Add(d.stall))
}

func (d *writeDeadline) clear() { _ = d.rc.SetWriteDeadline(time.Time{}) }
