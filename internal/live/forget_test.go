package live

import "testing"

// TestForgetDropsATopicsState: after Forget, a new connection to the topic
// gets neither its sticky message nor a resync for its messages before.
func TestForgetDropsATopicsState(t *testing.T) {
	s := newServer(t, Options{}, topics("job", "rows"))
	since := s.streams.Cursor()
	s.streams.Publish(Message{Topic: "job", Event: "done", Data: []byte("/result"), Sticky: true})
	s.streams.Publish(Message{Topic: "rows", Event: "rows", Data: []byte("<tr></tr>")})
	s.streams.Forget("job")
	s.streams.Forget("rows")
	s.streams.mu.Lock()
	kept := len(s.streams.sticky) + len(s.streams.lastSeq)
	s.streams.mu.Unlock()
	if kept != 0 {
		t.Fatalf("%d sticky messages and sequences kept after Forget", kept)
	}
	c := connect(t, s.URL+"?since="+since, nil)
	if ev := c.next(t); ev.Event != HelloEvent {
		t.Fatalf("first event %+v, want hello", ev)
	}
	// The next event is the next message published, not the forgotten ones.
	s.streams.Publish(Message{Topic: "job", Event: "progress", Data: []byte("1")})
	if ev := c.next(t); ev.Event != "progress" {
		t.Fatalf("event %+v after Forget, want the new message", ev)
	}
}
