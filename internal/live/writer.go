package live

import (
	"bytes"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

var errEvicted = errors.New("live: connection evicted")

// deadlineWriter gives every write to one connection a deadline, so a client that
// stops reading makes the write fail (and the connection end) instead of holding
// the library's goroutines forever. Only the connection's own handler goroutine
// writes; eviction, from another goroutine, sets a deadline in the past.
//
// It also gathers what the library writes between two flushes (an event is a
// Fprintf per field) and hands net/http one write per flush: each of net/http's
// writes takes the connection's lock and checks the response's state. The buffer
// is borrowed from a pool for one event only, so an idle connection holds none.
type deadlineWriter struct {
	w       http.ResponseWriter
	c       *conn
	timeout time.Duration
	armed   time.Time
	flushes *atomic.Int64
	buf     *bytes.Buffer // what is written since the last flush; nil when nothing is
}

// eventBufs lend deadlineWriter its buffers; one larger than maxPooledBuf (a
// rare huge event) is left to the GC rather than kept.
var eventBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBuf = 64 << 10

func (d *deadlineWriter) Header() http.Header { return d.w.Header() }

func (d *deadlineWriter) WriteHeader(code int) {
	if d.arm() == nil {
		d.w.WriteHeader(code)
	}
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if d.c.evicted.Load() {
		return 0, errEvicted
	}
	if d.buf == nil {
		d.buf = eventBufs.Get().(*bytes.Buffer)
	}
	return d.buf.Write(p)
}

func (d *deadlineWriter) Flush() {
	if d.send() == nil {
		_ = d.c.rc.Flush()
		d.flushes.Add(1)
	}
}

// send hands what was gathered to net/http in one write (without flushing it:
// the library's own response to a bad request ends without a flush, and
// net/http sends it when the handler returns).
func (d *deadlineWriter) send() error {
	err := d.arm()
	if d.buf == nil {
		return err
	}
	if err == nil {
		_, err = d.w.Write(d.buf.Bytes())
	}
	if d.buf.Cap() <= maxPooledBuf {
		d.buf.Reset()
		eventBufs.Put(d.buf)
	}
	d.buf = nil
	return err
}

// Unwrap lets http.ResponseController reach the connection.
func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.w }

// arm moves the write deadline forward, at most every quarter timeout (a
// deadline is a timer update).
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
