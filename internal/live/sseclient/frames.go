package sseclient

import (
	"bufio"
	"bytes"
	"io"
	"time"
)

// Frames reads an event stream by the same rules as Reader, for the benchmark's
// thousands of simulated tabs: nothing is allocated per event once its buffers
// have grown, and a line is found with a vectorised search rather than byte by
// byte (Reader's split copied every line and took a third of the bench's CPU
// at 5,000 tabs, CPU the console's latency then waited for). What Next returns
// is valid until the next call.
type Frames struct {
	r      *bufio.Reader
	skipLF bool   // the previous line ended with CR: a following LF belongs to it
	long   []byte // a line that did not fit the buffer, gathered
	lastID []byte
	event  []byte
	data   []byte
}

// Frame is one dispatched event; its slices are the reader's, reused by the
// next call to Next.
type Frame struct {
	Event []byte // empty when the stream named none ("message")
	Data  []byte
	ID    []byte    // the last event id in effect when it was dispatched
	At    time.Time // when its first line was read
}

// NewFrames reads events from r through a buffer of size bytes (a line longer
// than that is gathered, not lost).
func NewFrames(r io.Reader, size int) *Frames {
	return &Frames{r: bufio.NewReaderSize(r, size)}
}

// Next reads the next event into f; comments and events without data are
// consumed silently, as EventSource does.
func (fr *Frames) Next(f *Frame) error {
	fr.event, fr.data = fr.event[:0], fr.data[:0]
	hasData := false
	f.At = time.Time{}
	for {
		line, err := fr.line()
		if err != nil {
			return err
		}
		if len(line) == 0 {
			if !hasData {
				fr.event = fr.event[:0]
				f.At = time.Time{}
				continue
			}
			// The data buffer ends with the last data line's LF: not part of it.
			f.Event, f.Data, f.ID = fr.event, fr.data[:len(fr.data)-1], fr.lastID
			return nil
		}
		if f.At.IsZero() {
			f.At = time.Now()
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) { // compared, not converted: no allocation
		case "event":
			fr.event = append(fr.event[:0], value...)
		case "data":
			fr.data = append(fr.data, value...)
			fr.data = append(fr.data, '\n')
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				fr.lastID = append(fr.lastID[:0], value...)
			}
		}
	}
}

// line returns the next line without its terminator (CRLF, LF or CR), in the
// buffer's bytes where it fits (valid until the next read).
func (fr *Frames) line() ([]byte, error) {
	fr.long = fr.long[:0]
	for {
		if fr.r.Buffered() == 0 {
			if _, err := fr.r.Peek(1); err != nil {
				return nil, err // at EOF an unterminated line ends no event: nothing is lost
			}
		}
		buf, _ := fr.r.Peek(fr.r.Buffered())
		if fr.skipLF {
			fr.skipLF = false
			if buf[0] == '\n' {
				_, _ = fr.r.Discard(1)
				continue
			}
		}
		end := bytes.IndexByte(buf, '\n')
		search := buf
		if end >= 0 {
			search = buf[:end]
		}
		if cr := bytes.IndexByte(search, '\r'); cr >= 0 {
			end = cr
		}
		if end < 0 {
			fr.long = append(fr.long, buf...)
			_, _ = fr.r.Discard(len(buf))
			continue
		}
		fr.skipLF = buf[end] == '\r'
		// Discard moves past bytes already buffered: it reads nothing, so
		// buf stays intact until the next Peek.
		_, _ = fr.r.Discard(end + 1)
		if len(fr.long) > 0 {
			fr.long = append(fr.long, buf[:end]...)
			return fr.long, nil
		}
		return buf[:end], nil
	}
}
