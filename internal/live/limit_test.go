package live

import (
	"net/http"
	"testing"
	"time"
)

var (
	refusal = Message{Topic: "status", Event: "too-many-streams", Data: []byte("<p>close other tabs</p>")}
	busy    = Message{Topic: "status", Event: "too-many-streams", Data: []byte("<p>this replica is full</p>")}
)

// limited serves streams whose user is ?user= and whose session is ?session=.
func limited(t *testing.T, opts Options) *server {
	return newServer(t, opts, func(r *http.Request) Subscription {
		q := r.URL.Query()
		return Subscription{Topics: []string{"csrs"}, User: q.Get("user"), Owner: q.Get("session"),
			Refusal: []Message{refusal}, Busy: []Message{busy}}
	})
}

// One user may hold MaxPerUser connections whatever sessions they come from;
// one more gets the refusal (a short stream with the message that tells the
// page why), other users are not affected, and a connection that ends frees
// its place.
func TestConnectionsPerUserAreLimited(t *testing.T) {
	s := limited(t, Options{MaxPerUser: 3})
	var alice []*client
	for i, session := range []string{"s1", "s2", "s3"} {
		c := connect(t, s.URL+"?user=alice&session="+session, nil)
		if ev := c.next(t); ev.Event != HelloEvent {
			t.Fatalf("connection %d within the limit: first event %+v", i+1, ev)
		}
		alice = append(alice, c)
	}
	attached(t, s.streams, 3)

	// A fourth session of alice's is over her limit all the same.
	over := connect(t, s.URL+"?user=alice&session=s4", nil)
	if ev := over.next(t); ev.Event != refusal.Event || ev.Data != string(refusal.Data) {
		t.Fatalf("connection over the limit: got %+v, want the refusal", ev)
	}
	over.ended(t)
	if st := s.streams.Stats(); st.Connections != 3 || st.Refused != 1 || st.Busy != 0 {
		t.Errorf("after the refusal: %+v, want 3 connections, 1 refused", st)
	}

	// Another user, and connections without a user, are not limited by alice's.
	if ev := connect(t, s.URL+"?user=bob", nil).next(t); ev.Event != HelloEvent {
		t.Errorf("another user refused: %+v", ev)
	}
	if ev := connect(t, s.URL, nil).next(t); ev.Event != HelloEvent {
		t.Errorf("a connection without user refused: %+v", ev)
	}

	// Closing a tab frees its place.
	alice[0].close()
	eventually(t, "the closed connection to be gone", func() bool { return s.streams.Stats().Connections == 4 })
	if ev := connect(t, s.URL+"?user=alice&session=s4", nil).next(t); ev.Event != HelloEvent {
		t.Errorf("after a tab closed, a new one was refused: %+v", ev)
	}
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	if s.streams.users["alice"] != 3 || s.streams.users["bob"] != 1 || len(s.streams.users) != 2 {
		t.Errorf("user counts %v, want alice 3, bob 1", s.streams.users)
	}
}

// The process serves MaxStreams connections in all; one more, of a user who
// has none yet, gets the Busy message; a connection that ends frees its place.
func TestConnectionsPerReplicaAreLimited(t *testing.T) {
	s := limited(t, Options{MaxPerUser: 2, MaxStreams: 3})
	var open []*client
	for _, u := range []string{"alice", "alice", "bob"} {
		c := connect(t, s.URL+"?user="+u, nil)
		if ev := c.next(t); ev.Event != HelloEvent {
			t.Fatalf("%s within the limits: first event %+v", u, ev)
		}
		open = append(open, c)
	}
	carol := connect(t, s.URL+"?user=carol", nil)
	if ev := carol.next(t); ev.Event != busy.Event || ev.Data != string(busy.Data) {
		t.Fatalf("a fourth connection on a replica of three: got %+v, want the busy message", ev)
	}
	carol.ended(t)
	// alice is over her own limit too: she is told about hers, which she can act on.
	if ev := connect(t, s.URL+"?user=alice", nil).next(t); ev.Data != string(refusal.Data) {
		t.Errorf("alice over both limits: got %+v, want her own refusal", ev)
	}
	if st := s.streams.Stats(); st.Connections != 3 || st.Busy != 1 || st.Refused != 1 {
		t.Errorf("after the refusals: %+v", st)
	}
	open[2].close()
	eventually(t, "the closed connection to be gone", func() bool { return s.streams.Stats().Connections == 2 })
	if ev := connect(t, s.URL+"?user=carol", nil).next(t); ev.Event != HelloEvent {
		t.Errorf("after a connection closed, a new one was refused: %+v", ev)
	}
}

// Every way a connection ends gives its place back: the client leaving, the
// session's time running out (Until), its sign-out (End), and Close.
func TestEndedConnectionsFreeTheirPlaces(t *testing.T) {
	s := limited(t, Options{MaxPerUser: 2, MaxStreams: 4, Heartbeat: 20 * time.Millisecond})
	for _, u := range []string{"alice", "alice", "bob", "bob"} {
		if ev := connect(t, s.URL+"?user="+u+"&session="+u, nil).next(t); ev.Event != HelloEvent {
			t.Fatalf("%s: %+v", u, ev)
		}
	}
	attached(t, s.streams, 4)
	if n := s.streams.End("alice"); n != 2 {
		t.Fatalf("End ended %d connections, want 2", n)
	}
	eventually(t, "alice's signed-out connections to be gone", func() bool { return s.streams.Stats().Users == 1 })
	for range 2 {
		if ev := connect(t, s.URL+"?user=alice&session=again", nil).next(t); ev.Event != HelloEvent {
			t.Fatalf("after sign-out, alice's new session was refused: %+v", ev)
		}
	}

	// A session that has run out: its connection ends at the next heartbeat.
	expired := newServer(t, Options{MaxPerUser: 1, Heartbeat: 20 * time.Millisecond}, func(r *http.Request) Subscription {
		return Subscription{Topics: []string{"csrs"}, User: "carol", Until: time.Now().Add(50 * time.Millisecond), Refusal: []Message{refusal}}
	})
	c := connect(t, expired.URL, nil)
	if ev := c.next(t); ev.Event != HelloEvent {
		t.Fatalf("carol: %+v", ev)
	}
	c.ended(t)
	eventually(t, "the expired connection to be gone", func() bool { return expired.streams.Stats().Connections == 0 })
	if ev := connect(t, expired.URL, nil).next(t); ev.Event != HelloEvent {
		t.Errorf("after her session's stream expired, carol was refused: %+v", ev)
	}

	s.streams.Close()
	eventually(t, "Close to end every connection", func() bool {
		st := s.streams.Stats()
		return st.Connections == 0 && st.Users == 0
	})
}

func TestLimitDefaults(t *testing.T) {
	o := (Options{}).withDefaults()
	if o.MaxPerUser != 12 || o.MaxStreams != DefaultMaxStreams {
		t.Errorf("defaults %d per user, %d per replica", o.MaxPerUser, o.MaxStreams)
	}
}
