package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
)

// fuzzPayloads are seeds that try to smuggle SSE fields out of an event's
// data: field lines after LF, CR and CRLF, a blank line that would end the
// event early, comments (and data that begins as one, which the library
// writes in its comment form: encodeData), BOMs and NULs.
var fuzzPayloads = []string{
	"<tr id=\"row-csrs-a\"><td>a</td></tr>",
	"first\nevent: evil\ndata: injected\n\nid: 666\nretry: 1\n: comment",
	"x\revent: after-cr\rdata: y\r\rid: 7",
	"x\r\nevent: after-crlf\r\n\r\ndata: z",
	"\n\n\n",
	"data:no-space\nid:1\nevent:x",
	": begins as a comment\nevent: x",
	":",
	"\ufeffevent: bom",
	"nul\x00id: 5\x00",
	"<pre data-annotation=\"event: x&#10;data: y\">event: x\ndata: y</pre>",
}

// fuzzSeeds adds every payload under a few event names.
func fuzzSeeds(f *testing.F) {
	for _, p := range fuzzPayloads {
		for _, ev := range []string{"", "csrs-rows", "resync", "message"} {
			f.Add(ev, []byte(p))
		}
	}
	f.Add("event: x", []byte("d")) // an invalid event name: refused
	f.Add("x\ndata: y", []byte("d"))
}

// wantData is what a browser must read back from a message's data: the bytes
// with line breaks normalised to LF, as the HTML parser does anyway.
func wantData(data []byte) string {
	return string(bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n")))
}

// wantEvent is the event type a browser sees for a message's Event.
func wantEvent(ev string) string {
	if ev == "" {
		return "message"
	}
	return ev
}

// fieldLines checks the raw stream: every line (split at CR, LF or CRLF, as
// EventSource splits) is empty, a comment, or one of the fields the encoder
// itself writes; allowed lists the field names that may appear.
func fieldLines(t *testing.T, raw []byte, allowed ...string) {
	t.Helper()
	lines := strings.FieldsFunc(strings.ReplaceAll(string(raw), "\r\n", "\n"), func(r rune) bool { return r == '\n' || r == '\r' })
	for _, l := range lines {
		if strings.HasPrefix(l, ":") {
			continue
		}
		name, _, _ := strings.Cut(l, ":")
		ok := false
		for _, a := range allowed {
			ok = ok || name == a
		}
		if !ok {
			t.Fatalf("stream line %q is a field %q the encoder does not write:\n%q", l, name, raw)
		}
	}
}

// FuzzReply encodes a fuzzed message and a marker with Reply, the encoder of
// the short stream an expired session gets, and reads it back the way
// EventSource does: exactly the two events must come out, the fuzzed data as
// data, and no line of it may become a field (event, id, retry) of its own.
func FuzzReply(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, event string, data []byte) {
		m := Message{Topic: "t", Event: event, Data: data}
		marker := Message{Topic: "t", Event: "marker", Data: []byte("end")}
		rec := httptest.NewRecorder()
		err := Reply(rec, m, marker)
		if m.valid() != nil {
			if err == nil {
				t.Fatalf("Reply accepted an invalid message %+v", m)
			}
			return
		}
		if err != nil {
			t.Fatalf("Reply refused a valid message %+v: %v", m, err)
		}
		raw := rec.Body.Bytes()
		// Reply's own fields: its retry line, event names and data; never an id.
		fieldLines(t, raw, "event", "data", "retry")
		r := sseclient.NewReader(bytes.NewReader(raw))
		got, err := r.Next()
		if err != nil {
			t.Fatalf("no event read back from %q: %v", raw, err)
		}
		if got.Event != wantEvent(event) || got.Data != wantData(data) || got.ID != "" {
			t.Fatalf("read back event %q data %q id %q; sent event %q data %q\nstream %q", got.Event, got.Data, got.ID, event, data, raw)
		}
		if next, err := r.Next(); err != nil || next.Event != "marker" || next.Data != "end" {
			t.Fatalf("after the message: %+v, %v; want the marker\nstream %q", next, err, raw)
		}
		if extra, err := r.Next(); !errors.Is(err, io.EOF) {
			t.Fatalf("an extra event %+v (err %v) in %q", extra, err, raw)
		}
	})
}

// FuzzPublish sends a fuzzed message through Streams, the path of every live
// update (encodeData, then r3labs/sse and deadlineWriter), to a real connection on a
// loopback listener, and reads it as EventSource does: the same event, the
// data unchanged but for line breaks, the id Streams assigned, then the
// marker. One server and one connection serve the whole run.
func FuzzPublish(f *testing.F) {
	fuzzSeeds(f)
	streams := NewStreams(Options{Log: quietLog()})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		streams.Serve(w, r, Subscription{Topics: []string{"fuzz"}, Hello: "fuzz"})
	}))
	ctx, cancel := context.WithCancel(context.Background())
	f.Cleanup(func() {
		cancel()
		streams.Close()
		srv.Close()
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if err != nil {
		f.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = resp.Body.Close() })
	events := make(chan sseclient.Event, 16)
	done := make(chan error, 1)
	go func() {
		r := sseclient.NewReader(resp.Body)
		for {
			ev, err := r.Next()
			if err != nil {
				done <- err
				close(events)
				return
			}
			events <- ev
		}
	}()
	next := func(t testing.TB) sseclient.Event {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended: %v", <-done)
			}
			return ev
		case <-time.After(30 * time.Second):
			t.Fatal("no event within 30 s")
		}
		return sseclient.Event{}
	}
	if hello := next(f); hello.Event != HelloEvent {
		f.Fatalf("first event %+v, want hello", hello)
	}
	n := 0
	f.Fuzz(func(t *testing.T, event string, data []byte) {
		m := Message{Topic: "fuzz", Event: event, Data: data}
		if m.valid() != nil {
			return // Publish drops it (TestInvalidMessagesAreDropped)
		}
		n++
		marker := Message{Topic: "fuzz", Event: "marker", Data: []byte(fmt.Sprint(n))}
		seq, _ := parseCursor(streams.epoch, streams.Cursor())
		streams.Publish(m, marker)
		last := streams.Cursor()
		got := next(t)
		if got.Event != wantEvent(event) || got.Data != wantData(data) || got.ID != cursor(streams.epoch, seq+1) {
			t.Fatalf("read back event %q data %q id %q; sent event %q data %q as %s", got.Event, got.Data, got.ID, event, data, cursor(streams.epoch, seq+1))
		}
		if after := next(t); after.Event != "marker" || after.Data != fmt.Sprint(n) || after.ID != last {
			t.Fatalf("after the message came %+v, want the marker %d with id %s (the data split into events or set an id)", after, n, last)
		}
	})
}
