// Package sseclient reads a server-sent event stream the way a browser's
// EventSource does (the WHATWG HTML "event stream interpretation"), for tests and
// the benchmark: a line ends at CRLF, LF or CR, so whatever a browser would read
// as a field, this reader reads as a field too.
package sseclient

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"sync/atomic"
	"time"
)

// Event is one dispatched event.
type Event struct {
	Event string // "message" when the stream named none
	Data  string
	ID    string    // the last event id in effect when it was dispatched
	At    time.Time // when its first line was read
}

// Reader parses an event stream.
type Reader struct {
	r        *bufio.Reader
	lastID   string
	skipLF   bool     // the previous line ended with CR: a following LF belongs to it
	partial  []byte   // a line read in part
	queue    [][]byte // lines read, not yet returned
	comments atomic.Int64
}

// Comments returns how many comment lines (heartbeats) were read so far; safe to
// call while another goroutine reads.
func (r *Reader) Comments() int64 { return r.comments.Load() }

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event; comments and events without data are consumed
// silently, as EventSource does.
func (r *Reader) Next() (Event, error) {
	var ev Event
	var data strings.Builder
	hasData := false
	for {
		line, err := r.line()
		if err != nil {
			return Event{}, err
		}
		if ev.At.IsZero() {
			ev.At = time.Now()
		}
		if len(line) == 0 {
			if !hasData {
				ev = Event{}
				continue
			}
			ev.Data = strings.TrimSuffix(data.String(), "\n")
			ev.ID = r.lastID
			if ev.Event == "" {
				ev.Event = "message"
			}
			return ev, nil
		}
		if line[0] == ':' {
			r.comments.Add(1)
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Event = string(value)
		case "data":
			data.Write(value)
			data.WriteByte('\n')
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.lastID = string(value)
			}
		}
	}
}

// line returns the next line without its terminator (CRLF, LF or CR).
func (r *Reader) line() ([]byte, error) {
	for len(r.queue) == 0 {
		chunk, err := r.r.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull {
			if err == io.EOF && len(r.partial)+len(chunk) > 0 {
				line := append(r.partial, chunk...)
				r.partial = nil
				return line, nil
			}
			return nil, err
		}
		r.split(chunk)
	}
	line := r.queue[0]
	r.queue = r.queue[1:]
	return line, nil
}

// split cuts a chunk (which ReadSlice will overwrite) into copied lines; the
// unterminated rest waits in partial.
func (r *Reader) split(chunk []byte) {
	start := 0
	for i, b := range chunk {
		if r.skipLF {
			r.skipLF = false
			if b == '\n' {
				start = i + 1
				continue
			}
		}
		if b != '\n' && b != '\r' {
			continue
		}
		r.queue = append(r.queue, append(r.partial, chunk[start:i]...))
		r.partial = nil
		start = i + 1
		r.skipLF = b == '\r'
	}
	if start < len(chunk) {
		r.partial = append(r.partial, chunk[start:]...)
	}
}
