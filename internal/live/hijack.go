package live

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// An HTTP/1.1 stream is served on its hijacked connection, by a goroutine of
// its own, and its handler returns. What that saves, per idle connection
// (make bench's serving child, 1,000 and 5,000 idle streams: 51.5 → 14-16 KiB
// of RSS, 29-31 → 6 KiB of heap): net/http keeps a 4 KiB read buffer, a 4 KiB
// write buffer and the response's 2 KiB chunking buffer for as long as the
// handler runs, with the parsed request and the echo context; and the
// handler's goroutine has the whole middleware chain on its stack (some 16 KiB
// once grown), which a fresh goroutine parked in the library's loop does not.
//
// The connection is written as net/http writes a chunked response (status
// line, the headers the middleware and the library set, then each write as a
// chunk and the empty last chunk: net/http/server.go chunkWriter,
// net/http/internal/chunked.go) with no buffer of its own while idle: what a
// flush writes is gathered in a pooled buffer borrowed until that flush, and
// an event goes out with its chunk framing in one write to the socket
// (net/http's writer made two or three of an event larger than its buffer).
// The connection is closed when the stream ends (the response says
// Connection: close), never handed back to net/http. HTTP/2 (under TLS)
// cannot be hijacked: it is served as before, through the handler's
// ResponseWriter; so is HTTP/1.0, which has no chunked encoding.

// rawBatchMax is where a batch of events is written out before its flush:
// what net/http's own write buffer holds (4 KiB), so a connection that is
// behind holds no more than it would with net/http.
const rawBatchMax = 4 << 10

// rawResponse is an http.ResponseWriter over a hijacked HTTP/1.1 connection.
// Only the stream's goroutine writes; SetWriteDeadline (eviction) may come
// from another goroutine, which net.Conn allows.
type rawResponse struct {
	conn    net.Conn
	header  http.Header // nil once written
	status  int         // 0 until WriteHeader
	batch   *bytes.Buffer
	err     error  // the first write error: every later write fails with it
	onError func() // called once, at the first write error (ends the stream)
	reading sync.WaitGroup
}

// hijackStream takes over an HTTP/1.1 GET's connection, or returns nil (HTTP/2,
// HTTP/1.0, a ResponseWriter that cannot be hijacked: the caller serves through
// w). The headers w has (the middleware's) become the response's.
func hijackStream(w http.ResponseWriter, r *http.Request) *rawResponse {
	if r.ProtoMajor != 1 || r.ProtoMinor < 1 || r.Method != http.MethodGet {
		return nil
	}
	header := w.Header().Clone()
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil
	}
	// Anything the client sent after the request (it may pipeline one) is
	// never answered: the connection closes when the stream ends. rw's
	// buffers are dropped here with net/http's.
	_ = rw
	return &rawResponse{conn: conn, header: header}
}

func (w *rawResponse) Header() http.Header {
	if w.header == nil {
		return http.Header{} // written already: what is set here goes nowhere, as with net/http
	}
	return w.header
}

func (w *rawResponse) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	h := w.header
	h.Del("Content-Length")
	h.Set("Transfer-Encoding", "chunked")
	h.Set("Connection", "close") // the stream's end is the connection's
	if h.Get("Date") == "" {
		h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	b := w.buffer()
	b.WriteString("HTTP/1.1 ")
	b.WriteString(strconv.Itoa(code))
	b.WriteByte(' ')
	b.WriteString(http.StatusText(code))
	b.WriteString("\r\n")
	_ = h.Write(b) // net/http's own header writer: it drops line breaks in values
	b.WriteString("\r\n")
	w.header = nil
}

// Write adds p to the batch as one chunk; a batch past rawBatchMax is written out.
func (w *rawResponse) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.WriteHeader(http.StatusOK)
	if len(p) == 0 {
		return 0, nil
	}
	b := w.buffer()
	b.WriteString(strconv.FormatInt(int64(len(p)), 16))
	b.WriteString("\r\n")
	b.Write(p)
	b.WriteString("\r\n")
	if b.Len() >= rawBatchMax {
		if err := w.writeOut(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// FlushError writes the batch to the connection (http.ResponseController.Flush).
func (w *rawResponse) FlushError() error {
	if w.err != nil {
		return w.err
	}
	w.WriteHeader(http.StatusOK)
	return w.writeOut()
}

func (w *rawResponse) Flush() { _ = w.FlushError() }

// SetWriteDeadline is http.ResponseController's.
func (w *rawResponse) SetWriteDeadline(t time.Time) error { return w.conn.SetWriteDeadline(t) }

func (w *rawResponse) buffer() *bytes.Buffer {
	if w.batch == nil {
		w.batch = eventBufs.Get().(*bytes.Buffer)
	}
	return w.batch
}

func (w *rawResponse) writeOut() error {
	if w.batch == nil {
		return nil
	}
	_, err := w.conn.Write(w.batch.Bytes())
	w.releaseBatch()
	if err != nil {
		w.fail(err)
	}
	return err
}

func (w *rawResponse) releaseBatch() {
	putEventBuf(w.batch)
	w.batch = nil
}

func (w *rawResponse) fail(err error) {
	if w.err == nil {
		w.err = err
		if w.onError != nil {
			w.onError()
		}
	}
}

// finish ends the response as net/http ends a chunked one (the last, empty
// chunk), within timeout, and closes the connection. An evicted connection
// (a client that reads too slowly) is closed without it.
func (w *rawResponse) finish(timeout time.Duration, evicted bool) {
	if w.err == nil && !evicted {
		w.WriteHeader(http.StatusOK)
		w.buffer().WriteString("0\r\n\r\n")
		_ = w.conn.SetWriteDeadline(time.Now().Add(timeout))
		_ = w.writeOut()
	} else if w.batch != nil {
		w.releaseBatch()
	}
	_ = w.conn.Close()
	w.reading.Wait()
}

// readUntilGone reads the hijacked connection until the client closes it (or
// finish closes it) and then calls gone: what net/http's background read does
// for a request's context. A client sends nothing on an event stream;
// whatever it sends is dropped. finish waits for it to return.
func (w *rawResponse) readUntilGone(gone context.CancelFunc) {
	w.reading.Add(1)
	go func() {
		defer w.reading.Done()
		defer gone()
		var buf [64]byte
		for {
			if _, err := w.conn.Read(buf[:]); err != nil {
				return
			}
		}
	}()
}
