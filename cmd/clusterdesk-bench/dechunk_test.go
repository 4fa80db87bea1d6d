package main

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net/http/httputil"
	"strings"
	"testing"
	"testing/iotest"
)

// The dechunker reads what net/http's chunked writer writes, however the
// socket splits it, and whatever the chunks' sizes.
func TestDechunkerReadsWhatNetHTTPWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var want, wire bytes.Buffer
		cw := httputil.NewChunkedWriter(&wire)
		for range rng.IntN(20) {
			chunk := make([]byte, 1+rng.IntN(9000))
			for i := range chunk {
				chunk[i] = byte('a' + rng.IntN(26))
			}
			want.Write(chunk)
			_, _ = cw.Write(chunk)
		}
		_ = cw.Close()
		wire.WriteString("\r\n") // no trailers
		var src io.Reader = bytes.NewReader(wire.Bytes())
		if round%2 == 1 {
			src = iotest.OneByteReader(src)
		}
		got, err := io.ReadAll(&dechunker{r: src})
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("round %d: %d bytes, %v; want %d bytes", round, len(got), err, want.Len())
		}
	}
}

func TestDechunkerRejectsWhatIsNotAChunkedBody(t *testing.T) {
	for name, c := range map[string]struct {
		wire string
		want error
	}{
		"extensions and trailers": {"3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\n", nil},
		"closed inside a chunk":   {"5\r\nab", io.ErrUnexpectedEOF},
		"closed before the end":   {"3\r\nabc\r\n", io.ErrUnexpectedEOF},
		"not hex":                 {"zz\r\nabc\r\n0\r\n\r\n", errBadChunk},
		"no size":                 {"\r\nabc\r\n0\r\n\r\n", errBadChunk},
		"chunk longer than said":  {"2\r\nabc\r\n0\r\n\r\n", errBadChunk},
		"a size that overflows":   {strings.Repeat("f", 17) + "\r\n", errBadChunk},
	} {
		_, err := io.ReadAll(&dechunker{r: strings.NewReader(c.wire)})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}
