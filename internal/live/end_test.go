package live

import (
	"net/http"
	"testing"
	"time"
)

// End tells the owner's connections goodbye, closes them within seconds, and
// leaves other owners' connections alone.
func TestEndClosesOneOwnersStreamsAfterAGoodbye(t *testing.T) {
	s := newServer(t, Options{}, func(r *http.Request) Subscription {
		return Subscription{Topics: []string{"csrs"}, Owner: r.URL.Query().Get("owner")}
	})
	a1 := connect(t, s.URL+"?owner=a", nil)
	a2 := connect(t, s.URL+"?owner=a", nil)
	b := connect(t, s.URL+"?owner=b", nil)
	for _, c := range []*client{a1, a2, b} {
		if ev := c.next(t); ev.Event != HelloEvent {
			t.Fatalf("first event %q, want hello", ev.Event)
		}
	}
	start := time.Now()
	if n := s.streams.End("a", Message{Topic: "status", Event: "session-expired", Data: []byte("bye")}); n != 2 {
		t.Fatalf("End ended %d connections, want 2", n)
	}
	// Published after End: must reach b only.
	s.streams.Publish(Message{Topic: "csrs", Event: "csrs", Data: []byte("after")})
	for _, c := range []*client{a1, a2} {
		if ev := c.next(t); ev.Event != "session-expired" || ev.Data != "bye" {
			t.Fatalf("ended connection got %q %q, want the goodbye", ev.Event, ev.Data)
		}
		c.ended(t)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("ending took %v", took)
	}
	if ev := b.next(t); ev.Event != "csrs" || ev.Data != "after" {
		t.Fatalf("the other owner got %q %q", ev.Event, ev.Data)
	}
	if s.streams.End("", Message{Topic: "status", Event: "x", Data: []byte("y")}) != 0 {
		t.Fatal("End with no owner ended connections")
	}
	eventually(t, "only b left", func() bool { return s.streams.Stats().Connections == 1 })
}
