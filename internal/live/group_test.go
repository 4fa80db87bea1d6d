package live

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/r3labs/sse/v2"
)

// Tabs that join a group while it is busy get every message published after
// their hello, once each and in order, and none from before it: the group's
// stream holds events pushed before a tab joined, which its writer skips.
func TestJoiningABusyGroupNoGapNoRepeat(t *testing.T) {
	s := newServer(t, Options{}, func(*http.Request) Subscription { return Subscription{Topics: []string{"rows"}} })
	first := connect(t, s.URL, nil)
	first.next(t) // hello: the group exists, with a reader
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // publishes without pause while tabs join
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.streams.Publish(Message{Topic: "rows", Event: "rows", Data: []byte(strconv.Itoa(i))})
			time.Sleep(time.Millisecond) // the tabs keep up: none is evicted
		}
	}()
	go func() {
		for range first.events {
		}
	}()
	const tabs = 12
	clients := make([]*client, tabs)
	for i := range clients {
		clients[i] = connect(t, s.URL, nil)
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	last, _ := parseCursor(s.streams.epoch, s.streams.Cursor())
	for i, c := range clients {
		hello := c.next(t)
		if hello.Event != HelloEvent {
			t.Fatalf("tab %d: first event %q, want hello", i, hello.Event)
		}
		from, ok := parseCursor(s.streams.epoch, hello.ID)
		if !ok {
			t.Fatalf("tab %d: hello id %q", i, hello.ID)
		}
		// Each message's data is its number; its id's sequence is one more
		// than the number (the first message after the tabs' first hello).
		for want := from + 1; want <= last; want++ {
			ev := c.next(t)
			seq, _ := parseCursor(s.streams.epoch, ev.ID)
			if ev.Event != "rows" || seq != want {
				t.Fatalf("tab %d (hello at %d): got %s %q id %d, want message %d", i, from, ev.Event, ev.Data, seq, want)
			}
		}
	}
	if st := s.streams.Stats(); st.Evicted != 0 {
		t.Fatalf("stats %+v: no tab fell behind", st)
	}
}

// Tabs of different topic sets are groups of their own: each gets its topics'
// messages only; tabs of one set in any order share one.
func TestTopicSetsAreGroups(t *testing.T) {
	s := newServer(t, Options{}, func(r *http.Request) Subscription {
		return Subscription{Topics: r.URL.Query()["t"]}
	})
	ab := connect(t, s.URL+"?t=a&t=b", nil)
	ba := connect(t, s.URL+"?t=b&t=a", nil)
	a := connect(t, s.URL+"?t=a", nil)
	for _, c := range []*client{ab, ba, a} {
		c.next(t)
	}
	s.streams.mu.Lock()
	groups := len(s.streams.groups)
	s.streams.mu.Unlock()
	if groups != 2 {
		t.Fatalf("%d groups, want 2 ({a,b} and {a})", groups)
	}
	s.streams.Publish(Message{Topic: "b", Event: "b", Data: []byte("1")}, Message{Topic: "a", Event: "a", Data: []byte("2")})
	for name, c := range map[string]*client{"a&b": ab, "b&a": ba} {
		if ev := c.next(t); ev.Event != "b" {
			t.Fatalf("%s: %q, want b", name, ev.Event)
		}
		if ev := c.next(t); ev.Event != "a" {
			t.Fatalf("%s: %q, want a", name, ev.Event)
		}
	}
	if ev := a.next(t); ev.Event != "a" {
		t.Fatalf("a: %q, want a (not b)", ev.Event)
	}
	// The last tab of a group gone, its stream goes too.
	a.close()
	eventually(t, "the {a} group removed", func() bool {
		s.streams.mu.Lock()
		defer s.streams.mu.Unlock()
		return len(s.streams.groups) == 1 && !s.streams.srv.StreamExists("g"+strconv.FormatUint(3, 36))
	})
}

// The writer reads an event's key from the library's first line of it, and
// writes the connection's own events as the library would.
func TestEventKeyAndFormat(t *testing.T) {
	for line, want := range map[string]uint64{
		"id: abc123-7\n":   messageKey(7),
		": hb 123456789\n": 123456789,
		"data: x\n":        0,
		"id: nodash\n":     0,
		": hb x\n":         0,
	} {
		if got := eventKey([]byte(line)); got != want {
			t.Errorf("eventKey(%q) = %d, want %d", line, got, want)
		}
	}
	var b bytes.Buffer
	formatEvent(&b, &sse.Event{ID: []byte("e-1"), Event: []byte("rows"), Data: encodeData([]byte("a\nb"))})
	formatEvent(&b, &sse.Event{ID: []byte("e-2"), Data: encodeData([]byte(":x"))})
	formatEvent(&b, heartbeatEvent(5))
	want := "id: e-1\ndata: a\ndata: b\nevent: rows\n\n" + "id: e-2\n:\ndata: :x\n\n" + ": hb 5\n\n"
	if b.String() != want {
		t.Fatalf("formatEvent:\n%q\nwant\n%q", b.String(), want)
	}
	if k := messageKey(1); k <= messageKey(0)+1<<keyShift-1 {
		t.Fatalf("message keys leave no room for heartbeats: %d", k)
	}
}

// The writer skips the group's events at or below the connection's mark (pushed
// before its hello) and, once it has left, every group event; its own events
// go out ahead of the next group event; several queued events go out in one
// flush.
func TestWriterSkipsEventsBeforeTheMarkAndBatches(t *testing.T) {
	rec := httptest.NewRecorder()
	g := &group{}
	c := &conn{g: g, rc: http.NewResponseController(rec)}
	c.mark.Store(messageKey(5))
	var flushes atomic.Int64
	d := &deadlineWriter{w: rec, c: c, timeout: time.Minute, flushes: &flushes}
	event := func(seq int) {
		fmt.Fprintf(d, "id: e-%d\n", seq)
		fmt.Fprintf(d, "data: %d\n", seq)
		fmt.Fprint(d, "\n")
		d.Flush()
	}
	g.lastKey.Store(messageKey(8))
	event(4) // before the hello
	event(5)
	if rec.Body.Len() != 0 || flushes.Load() != 0 {
		t.Fatalf("events before the mark written: %q", rec.Body.String())
	}
	event(6) // 7 and 8 are queued behind it: no flush yet
	event(7)
	if flushes.Load() != 0 {
		t.Fatalf("flushed before the queued events arrived: %q", rec.Body.String())
	}
	event(8)
	if got, want := rec.Body.String(), "id: e-6\ndata: 6\n\nid: e-7\ndata: 7\n\nid: e-8\ndata: 8\n\n"; got != want || flushes.Load() != 1 {
		t.Fatalf("after 8: %q in %d flushes, want %q in one", got, flushes.Load(), want)
	}
	if c.mark.Load() != messageKey(8) {
		t.Fatalf("mark %d, want message 8's", c.mark.Load())
	}
	rec.Body.Reset()
	goodbye := []byte("event: bye\ndata: x\n\n")
	c.own.Store(&goodbye)
	c.left.Store(true)
	g.lastKey.Store(messageKey(8) + 1)
	fmt.Fprint(d, ": hb "+strconv.FormatUint(messageKey(8)+1, 10)+"\n")
	fmt.Fprint(d, "\n")
	d.Flush()
	if got := rec.Body.String(); got != string(goodbye) {
		t.Fatalf("after leaving: %q, want the goodbye only", got)
	}
}
