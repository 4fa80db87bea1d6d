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
	skipLF   bool // the previous line ended with CR: a following LF belongs to it
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
	var out []byte
	for {
		b, err := r.r.ReadByte()
		if err != nil {
			if err == io.EOF && len(out) > 0 {
				return out, nil
			}
			return nil, err
		}
		if r.skipLF {
			r.skipLF = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\n':
			return out, nil
		case '\r':
			r.skipLF = true
			return out, nil
		}
		out = append(out, b)
	}
}
