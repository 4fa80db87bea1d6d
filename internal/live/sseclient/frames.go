package sseclient

import (
	"bytes"
	"io"
	"time"
)

// Frames reads an event stream by the same rules as Reader, for the benchmark's
// thousands of simulated tabs: nothing is allocated per event once its buffer
// has grown, a line is found with a vectorised search rather than byte by
// byte, and an event's data, when it is one line (the console writes its
// rows that way), is not copied out of the buffer the socket was read into.
// (Reader's split copied every line and took a third of the bench's CPU at
// 5,000 tabs, CPU the console's latency then waited for.) What Next returns
// is valid until the next call.
type Frames struct {
	src    io.Reader
	buf    []byte
	r, w   int   // the unread bytes are buf[r:w]
	err    error // the source's, returned once buf is drained
	skipLF bool  // the previous line ended with CR: a following LF belongs to it
	lastID []byte
	event  []byte
	// The current event's data: one line stays in buf (dataOff, dataLen); a
	// second is joined with it in data.
	dataOff, dataLen, dataLines int
	data                        []byte
	start                       int // where the current event begins in buf: kept until it is returned
}

// Frame is one dispatched event; its slices are the reader's, reused by the
// next call to Next.
type Frame struct {
	Event []byte // empty when the stream named none ("message")
	Data  []byte
	ID    []byte    // the last event id in effect when it was dispatched
	At    time.Time // when its first line was read
}

// NewFrames reads events from r through a buffer of size bytes to begin with
// (it grows to hold an event larger than that).
func NewFrames(r io.Reader, size int) *Frames {
	return &Frames{src: r, buf: make([]byte, max(size, 16))}
}

// Next reads the next event into f; comments and events without data are
// consumed silently, as EventSource does.
func (fr *Frames) Next(f *Frame) error {
	fr.begin()
	f.At = time.Time{}
	for {
		line, err := fr.line()
		if err != nil {
			return err
		}
		if len(line) == 0 {
			if fr.dataLines == 0 {
				fr.begin()
				f.At = time.Time{}
				continue
			}
			f.Event, f.ID = fr.event, fr.lastID
			if fr.dataLines == 1 {
				f.Data = fr.buf[fr.dataOff : fr.dataOff+fr.dataLen]
			} else {
				f.Data = fr.data
			}
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
			fr.dataLines++
			switch fr.dataLines {
			case 1:
				fr.dataOff, fr.dataLen = fr.offset(value), len(value)
			case 2:
				fr.data = append(fr.data[:0], fr.buf[fr.dataOff:fr.dataOff+fr.dataLen]...)
				fallthrough
			default:
				fr.data = append(fr.data, '\n')
				fr.data = append(fr.data, value...)
			}
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				fr.lastID = append(fr.lastID[:0], value...)
			}
		}
	}
}

// begin starts an event: what came before it in buf may be overwritten.
func (fr *Frames) begin() {
	fr.event = fr.event[:0]
	fr.dataLines = 0
	fr.start = fr.r
}

// offset is where value, a slice of buf, begins in it.
func (fr *Frames) offset(value []byte) int {
	return cap(fr.buf) - cap(value)
}

// line returns the next line without its terminator (CRLF, LF or CR), a
// slice of buf valid until the event is returned.
func (fr *Frames) line() ([]byte, error) {
	scanned := fr.r // bytes before this hold no line end
	for {
		if fr.skipLF && fr.r < fr.w {
			fr.skipLF = false
			if fr.buf[fr.r] == '\n' {
				fr.r++
				scanned = fr.r
			}
		}
		unread := fr.buf[scanned:fr.w]
		end := bytes.IndexByte(unread, '\n')
		search := unread
		if end >= 0 {
			search = unread[:end]
		}
		if cr := bytes.IndexByte(search, '\r'); cr >= 0 {
			end = cr
		}
		if end >= 0 {
			end += scanned
			line := fr.buf[fr.r:end]
			fr.skipLF = fr.buf[end] == '\r'
			fr.r = end + 1
			return line, nil
		}
		scanned = fr.w
		if fr.err != nil {
			return nil, fr.err // at EOF an unterminated line ends no event: nothing is lost
		}
		if fr.w == len(fr.buf) {
			scanned -= fr.room()
		}
		n, err := fr.src.Read(fr.buf[fr.w:])
		fr.w += n
		fr.err = err
	}
}

// room makes space at buf's end: it moves the current event to the front
// (what is before it is done with) or, where the event fills buf, doubles
// buf. It returns how far the bytes moved.
func (fr *Frames) room() int {
	shift := fr.start
	if shift == 0 {
		grown := make([]byte, 2*len(fr.buf))
		copy(grown, fr.buf[:fr.w])
		fr.buf = grown
		return 0
	}
	copy(fr.buf, fr.buf[shift:fr.w])
	fr.r -= shift
	fr.w -= shift
	fr.start = 0
	if fr.dataLines == 1 {
		fr.dataOff -= shift
	}
	return shift
}
