package main

import (
	"errors"
	"io"
)

// dechunker reads an HTTP/1.1 chunked body (RFC 9112 section 7.1) from r and
// removes the framing in place, in the caller's buffer: the socket's bytes
// land in the tab's one buffer (sseclient.Frames's) and stay there, instead
// of passing through a buffer of the connection's and another of the body's
// (net/http's chunkedReader reads through a bufio.Reader). At 5,000 tabs each
// copy of a 4 KB event is memory traffic the console's latency waits for.
// Every byte is read and checked, as net/http's reader does: a malformed
// frame ends the stream with an error, so a broken response is no silent
// shortfall.
type dechunker struct {
	r       io.Reader
	state   chunkState
	size    uint64 // the current chunk's bytes left (chunkData), or its size so far (chunkSize)
	digits  int    // hex digits of the size line read so far
	lineLen int    // bytes of the current trailer line
	err     error
}

type chunkState int

const (
	chunkSize    chunkState = iota // reading the hex size
	chunkExt                       // after the size: extensions, up to the line's end
	chunkData                      // the chunk's bytes
	chunkDataEnd                   // the CRLF after a chunk's bytes
	chunkTrailer                   // after the last (empty) chunk: trailer lines up to an empty one
	chunkDone
)

var errBadChunk = errors.New("malformed chunked encoding")

func (d *dechunker) Read(p []byte) (int, error) {
	for {
		if d.err != nil {
			return 0, d.err
		}
		if len(p) == 0 {
			return 0, nil
		}
		n, err := d.r.Read(p)
		out, derr := d.decode(p[:n])
		switch {
		case derr != nil:
			d.err = derr
		case d.state == chunkDone:
			d.err = io.EOF
		case err == io.EOF:
			d.err = io.ErrUnexpectedEOF // the connection closed inside the body
		case err != nil:
			d.err = err
		}
		if out > 0 {
			return out, nil // any error comes with the next call
		}
	}
}

// decode removes the chunk framing from b, moving the payload to its front,
// and returns the payload's length.
func (d *dechunker) decode(b []byte) (int, error) {
	o := 0
	for i := 0; i < len(b); {
		switch d.state {
		case chunkData:
			k := len(b) - i
			if uint64(k) > d.size {
				k = int(d.size)
			}
			if o != i {
				copy(b[o:], b[i:i+k])
			}
			o, i = o+k, i+k
			d.size -= uint64(k)
			if d.size == 0 {
				d.state = chunkDataEnd
			}
			continue
		case chunkDone:
			return o, nil // nothing follows on a connection that closes
		}
		c := b[i]
		i++
		switch d.state {
		case chunkSize:
			switch {
			case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
				if d.digits == 15 { // 16 hex digits would overflow what a chunk can hold
					return o, errBadChunk
				}
				d.size = d.size<<4 | uint64(unhex(c))
				d.digits++
			case c == ';' || c == ' ' || c == '\t':
				d.state = chunkExt
			case c == '\r':
			case c == '\n':
				if err := d.endSizeLine(); err != nil {
					return o, err
				}
			default:
				return o, errBadChunk
			}
		case chunkExt:
			if c == '\n' {
				if err := d.endSizeLine(); err != nil {
					return o, err
				}
			}
		case chunkDataEnd:
			switch c {
			case '\r':
			case '\n':
				d.state = chunkSize
			default:
				return o, errBadChunk
			}
		case chunkTrailer:
			switch c {
			case '\r':
			case '\n':
				if d.lineLen == 0 {
					d.state = chunkDone
				}
				d.lineLen = 0
			default:
				d.lineLen++
			}
		}
	}
	return o, nil
}

func (d *dechunker) endSizeLine() error {
	if d.digits == 0 {
		return errBadChunk
	}
	d.digits = 0
	if d.size == 0 {
		d.state = chunkTrailer
	} else {
		d.state = chunkData
	}
	return nil
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
