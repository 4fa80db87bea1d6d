package live

import (
	"net/http"
	"testing"
)

// One session may hold MaxPerOwner connections; one more gets the refusal
// (a short stream with the message that tells the page why), other sessions
// are not affected, and a connection that ends frees its place.
func TestConnectionsPerOwnerAreLimited(t *testing.T) {
	refusal := Message{Topic: "status", Event: "too-many-streams", Data: []byte("<p>close other tabs</p>")}
	s := newServer(t, Options{MaxPerOwner: 3}, func(r *http.Request) Subscription {
		return Subscription{Topics: []string{"csrs"}, Owner: r.URL.Query().Get("owner"), Refusal: []Message{refusal}}
	})
	var alice []*client
	for range 3 {
		c := connect(t, s.URL+"?owner=alice", nil)
		if ev := c.next(t); ev.Event != HelloEvent {
			t.Fatalf("connection %d within the limit: first event %+v", len(alice)+1, ev)
		}
		alice = append(alice, c)
	}
	attached(t, s.streams, 3)

	over := connect(t, s.URL+"?owner=alice", nil)
	if ev := over.next(t); ev.Event != refusal.Event || ev.Data != string(refusal.Data) {
		t.Fatalf("connection over the limit: got %+v, want the refusal", ev)
	}
	over.ended(t)
	if n := s.streams.Stats().Connections; n != 3 {
		t.Errorf("the refused connection is counted: %d connections served", n)
	}

	// Another session, and connections without an owner, are not limited by alice's.
	if ev := connect(t, s.URL+"?owner=bob", nil).next(t); ev.Event != HelloEvent {
		t.Errorf("another session refused: %+v", ev)
	}
	if ev := connect(t, s.URL, nil).next(t); ev.Event != HelloEvent {
		t.Errorf("a connection without owner refused: %+v", ev)
	}

	// Closing a tab frees its place.
	alice[0].close()
	eventually(t, "the closed connection to be gone", func() bool { return s.streams.Stats().Connections == 4 })
	if ev := connect(t, s.URL+"?owner=alice", nil).next(t); ev.Event != HelloEvent {
		t.Errorf("after a tab closed, a new one was refused: %+v", ev)
	}
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	if s.streams.owners["alice"] != 3 || s.streams.owners["bob"] != 1 || len(s.streams.owners) != 2 {
		t.Errorf("owner counts %v, want alice 3, bob 1", s.streams.owners)
	}
}

func TestMaxPerOwnerDefault(t *testing.T) {
	if got := (Options{}).withDefaults().MaxPerOwner; got != 12 {
		t.Errorf("default %d", got)
	}
}
