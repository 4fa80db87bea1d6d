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
// writes takes the connection's lock and checks the response's state. Where
// the group has pushed more events behind the one just written (they are on
// their way through the subscriber channel), the event goes to net/http
// without a flush: the flush comes with the last of them, so a connection
// that is behind catches up in fewer writes to its socket (net/http's own
// buffers gather small events; none of this writer's is held meanwhile: with
// thousands of connections behind at once, a batch buffer each was hundreds of
// megabytes). The buffer is borrowed from a pool for one event only, so an idle
// connection holds none.
//
// It reads each group event's key (group.go): the connection's mark, its
// position in its group. It skips an event pushed before the connection's hello
// (its key is at or below the mark) and, once the connection has left, every
// group event; what the connection has of its own (conn.own) goes first.
type deadlineWriter struct {
	w       http.ResponseWriter
	c       *conn
	s       *Streams
	locked  bool // holds s.mu, from Serve until the first flush attaches the connection
	timeout time.Duration
	armed   time.Time
	flushes *atomic.Int64
	buf     *bytes.Buffer // what is written and not yet handed to net/http; nil when nothing is
	inEvent bool          // between an event's first write and its flush
	skip    bool          // the current event is not written
	key     uint64        // the current event's key (0: none)
	// unflushed: events handed to net/http are waiting for a flush.
	unflushed bool
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
	if !d.inEvent {
		d.inEvent = true
		d.key = eventKey(p)
		if own := d.c.own.Swap(nil); own != nil {
			d.buffer().Write(*own)
		}
		d.skip = d.c.left.Load() || d.key != 0 && d.key <= d.c.mark.Load()
		if d.key > d.c.mark.Load() {
			d.c.mark.Store(d.key)
		}
	}
	if d.skip {
		return len(p), nil
	}
	return d.buffer().Write(p)
}

func (d *deadlineWriter) buffer() *bytes.Buffer {
	if d.buf == nil {
		d.buf = eventBufs.Get().(*bytes.Buffer)
	}
	return d.buf
}

// Flush ends an event: what was gathered goes to the client, unless more of
// the group's events are on their way to this connection.
func (d *deadlineWriter) Flush() {
	if d.locked {
		d.first()
		return
	}
	d.inEvent = false
	if d.buf != nil {
		if d.send() != nil {
			return
		}
		d.unflushed = true
	}
	// The next event queued: it flushes this one too.
	more := d.key != 0 && d.key < d.c.g.lastKey.Load() && !d.c.left.Load()
	if d.unflushed && !more {
		_ = d.c.rc.Flush()
		d.flushes.Add(1)
		d.unflushed = false
	}
}

// first is the library's first flush, after its subscriber is registered: the
// connection attaches (under s.mu, held since Serve) and its own first events
// go out with the response's header.
func (d *deadlineWriter) first() {
	first := d.s.attach(d.c)
	d.locked = false
	d.s.mu.Unlock()
	if first == nil {
		d.c.left.Store(true)
		d.c.cancel()
	} else {
		d.buffer().Write(first)
	}
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
	if d.buf.Len() == 0 {
		d.release()
		return err
	}
	if err == nil {
		_, err = d.w.Write(d.buf.Bytes())
	}
	d.release()
	return err
}

func (d *deadlineWriter) release() {
	putEventBuf(d.buf)
	d.buf = nil
}

// putEventBuf returns b to eventBufs, unless it grew past maxPooledBuf (then
// the GC takes it: the pool keeps no outsized buffer alive).
func putEventBuf(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBuf {
		b.Reset()
		eventBufs.Put(b)
	}
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
