package sseclient

import (
	"io"
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
