package sseclient

import (
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReaderFollowsTheEventStreamRules(t *testing.T) {
	stream := ": heartbeat\n" +
		"retry: 10\n" +
		"id: 7\nevent: a\ndata: one\ndata:  two\n\n" + // one leading space is stripped, not two
		"data: lf\r\ndata: crlf\rdata: cr\r\n" + // all three line ends
		"\n" +
		"event: ignored\n\n" + // no data: not dispatched
		"data\n\n" + // a field without colon
		"id: 8\x00\ndata: x\n\n" + // an id with NUL is ignored
		"data: last" // unterminated at EOF: not an event
	want := []Event{
		{Event: "a", Data: "one\n two", ID: "7"},
		{Event: "message", Data: "lf\ncrlf\ncr", ID: "7"},
		{Event: "message", Data: "", ID: "7"},
		{Event: "message", Data: "x", ID: "7"},
	}
	// One byte at a time too: a CRLF split across reads is still one line end.
	for name, src := range map[string]io.Reader{
		"whole":        strings.NewReader(stream),
		"byte-by-byte": iotest.OneByteReader(strings.NewReader(stream)),
	} {
		t.Run(name, func(t *testing.T) {
			r := NewReader(src)
			for i, w := range want {
				got, err := r.Next()
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if got.Event != w.Event || got.Data != w.Data || got.ID != w.ID {
					t.Fatalf("event %d: got %+v, want %+v", i, got, w)
				}
			}
			if ev, err := r.Next(); err == nil {
				t.Fatalf("extra event %+v", ev)
			}
			if r.Comments() != 1 {
				t.Errorf("comments %d", r.Comments())
			}
		})
	}
}

// Frames must read the same stream the same way: the bench's tabs use it.
func TestFramesFollowTheEventStreamRulesAsReaderDoes(t *testing.T) {
	stream := ": heartbeat\n" +
		"retry: 10\n" +
		"id: 7\nevent: a\ndata: one\ndata:  two\n\n" +
		"data: lf\r\ndata: crlf\rdata: cr\r\n" +
		"\n" +
		"event: ignored\n\n" +
		"data\n\n" +
		"id: 8\x00\ndata: x\n\n" +
		"data: " + strings.Repeat("long ", 40) + "\n\n" + // longer than the 16-byte buffer below
		"data: last"
	want := []Event{
		{Event: "a", Data: "one\n two", ID: "7"},
		{Event: "message", Data: "lf\ncrlf\ncr", ID: "7"},
		{Event: "message", Data: "", ID: "7"},
		{Event: "message", Data: "x", ID: "7"},
		{Event: "message", Data: strings.Repeat("long ", 40), ID: "7"},
	}
	for name, src := range map[string]func() io.Reader{
		"whole":        func() io.Reader { return strings.NewReader(stream) },
		"byte-by-byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(stream)) },
		"half-by-half": func() io.Reader { return iotest.HalfReader(strings.NewReader(stream)) },
	} {
		t.Run(name, func(t *testing.T) {
			r := NewFrames(src(), 16)
			var f Frame
			for i, w := range want {
				if err := r.Next(&f); err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				ev := string(f.Event)
				if ev == "" {
					ev = "message"
				}
				if ev != w.Event || string(f.Data) != w.Data || string(f.ID) != w.ID || f.At.IsZero() {
					t.Fatalf("event %d: got %q %q %q at %v, want %+v", i, f.Event, f.Data, f.ID, f.At, w)
				}
			}
			if err := r.Next(&f); err == nil {
				t.Fatalf("extra event %q %q", f.Event, f.Data)
			}
		})
	}
}

func BenchmarkFrames(b *testing.B) {
	ev := "id: 123-456\ndata: <tr id=\"row-csrs-bench-01\">" + strings.Repeat("x", 2000) + "</tr>\nevent: csrs-rows\n\n"
	stream := strings.Repeat(ev, 100)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var f Frame
	src := strings.NewReader(stream)
	r := NewFrames(src, 8<<10)
	for b.Loop() {
		src.Reset(stream)
		r.r, r.w, r.err = 0, 0, nil
		for r.Next(&f) == nil {
		}
	}
}

// On random streams (every field, every line end, lines longer than the
// buffer, any split of the reads), Frames dispatches what Reader does.
func TestFramesReadRandomStreamsAsReaderDoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ends := []string{"\n", "\r\n", "\r"}
	for round := range 500 {
		var s strings.Builder
		for range rng.IntN(40) {
			switch rng.IntN(7) {
			case 0:
				s.WriteString("data: " + strings.Repeat("d", rng.IntN(80)))
			case 1:
				s.WriteString("event: e" + strings.Repeat("v", rng.IntN(5)))
			case 2:
				s.WriteString("id: " + strconv.Itoa(rng.IntN(1000)))
			case 3:
				s.WriteString(": comment")
			case 4:
				s.WriteString("data")
			case 5, 6: // a blank line: dispatch
			}
			s.WriteString(ends[rng.IntN(len(ends))])
		}
		// A lone CR as the very last byte: Reader returns the CR as the
		// line at EOF (its line(), an unterminated rest), Frames a line end;
		// the connection is closing there, so neither tab loses an event.
		stream := s.String() + "\n"
		want := NewReader(strings.NewReader(stream))
		var src io.Reader = strings.NewReader(stream)
		switch round % 3 {
		case 1:
			src = iotest.OneByteReader(src)
		case 2:
			src = iotest.HalfReader(src)
		}
		got := NewFrames(src, 16+rng.IntN(64))
		var f Frame
		for i := 0; ; i++ {
			w, werr := want.Next()
			gerr := got.Next(&f)
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("round %d event %d: Reader %v, Frames %v (stream %q)", round, i, werr, gerr, stream)
			}
			if werr != nil {
				break
			}
			ev := string(f.Event)
			if ev == "" {
				ev = "message"
			}
			if ev != w.Event || string(f.Data) != w.Data || string(f.ID) != w.ID {
				t.Fatalf("round %d event %d: Frames %q %q %q, Reader %+v (stream %q)", round, i, ev, f.Data, f.ID, w, stream)
			}
		}
	}
}
