package live

import (
	"errors"
	"net/http"
	"sync/atomic"
	"time"
)

var errEvicted = errors.New("live: connection evicted")

// deadlineWriter gives every write to one connection a deadline, so a client that
// stops reading makes the write fail (and the connection end) instead of holding
// the library's goroutines forever. Only the connection's own handler goroutine
// writes; eviction, from another goroutine, sets a deadline in the past.
type deadlineWriter struct {
	w       http.ResponseWriter
	c       *conn
	timeout time.Duration
	armed   time.Time
	flushes *atomic.Int64
}

func (d *deadlineWriter) Header() http.Header { return d.w.Header() }

func (d *deadlineWriter) WriteHeader(code int) {
	if d.arm() == nil {
		d.w.WriteHeader(code)
	}
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if err := d.arm(); err != nil {
		return 0, err
	}
	return d.w.Write(p)
}

func (d *deadlineWriter) Flush() {
	if d.arm() == nil {
		_ = d.c.rc.Flush()
		d.flushes.Add(1)
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.w }

// arm moves the write deadline forward, at most every quarter timeout (a
// deadline is a timer update, and an event is several small writes).
func (d *deadlineWriter) arm() error {
	if d.c.evicted.Load() {
		return errEvicted
	}
	now := time.Now()
	if now.Sub(d.armed) < d.timeout/4 {
		return nil
	}
	d.armed = now
	// A writer that does not support deadlines (httptest.ResponseRecorder) still
	// streams; only the stall protection is lost.
	_ = d.c.rc.SetWriteDeadline(now.Add(d.timeout))
	// evict sets the evicted flag before its past deadline: if it ran between the
	// check above and the new deadline, the new deadline must not stand.
	if d.c.evicted.Load() {
		_ = d.c.rc.SetWriteDeadline(now)
		return errEvicted
	}
	return nil
}
