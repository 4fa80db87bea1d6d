package live

import (
	"context"
	"fmt"
	"html"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
)

func topics(ts ...string) func(*http.Request) Subscription {
	return func(r *http.Request) Subscription {
		return Subscription{Topics: ts, Resync: []string{"rows"}, Since: r.URL.Query().Get("since"), Hello: "csrs"}
	}
}

func TestHelloStickyThenLive(t *testing.T) {
	s := newServer(t, Options{}, topics("csrs", "rows"))
	s.streams.Publish(Message{Topic: "csrs", Event: "csrs", Data: []byte("<b>old count</b>"), Sticky: true})
	s.streams.Publish(Message{Topic: "csrs", Event: "csrs", Data: []byte("<b>12</b>"), Sticky: true})
	s.streams.Publish(Message{Topic: "other", Event: "other", Data: []byte("not for this client"), Sticky: true})

	c := connect(t, s.URL+"?since="+s.streams.Cursor(), nil)
	if ev := c.next(t); ev.Event != HelloEvent || ev.Data != "csrs" {
		t.Fatalf("first event %+v, want hello", ev)
	}
	// The latest sticky message of each subscribed topic, and only that.
	if ev := c.next(t); ev.Event != "csrs" || ev.Data != "<b>12</b>" {
		t.Fatalf("sticky %+v", ev)
	}
	s.streams.Publish(Message{Topic: "rows", Event: "rows", Data: []byte("<tr id=\"row-csrs-a\"></tr>")})
	ev := c.next(t)
	if ev.Event != "rows" || ev.Data != `<tr id="row-csrs-a"></tr>` {
		t.Fatalf("live %+v", ev)
	}
	if ev.ID != s.streams.Cursor() {
		t.Errorf("event id %q, want the cursor %q", ev.ID, s.streams.Cursor())
	}
}

// A CSR annotation can hold anything. Inside an HTML fragment it must reach the
// browser as data, byte for byte (CR normalised as the HTML parser would), and no
// line of it may become an SSE field or a separate event.
func TestUserTextStaysData(t *testing.T) {
	annotation := "first line\nevent: evil\ndata: injected\n\nid: 666\nretry: 1\n: not a comment\r\n" +
		"event: after-crlf\rdata: after-cr\n\n\n"
	fragment := `<pre data-annotation="` + html.EscapeString(annotation) + `">` + html.EscapeString(annotation) + "</pre>\n<p>end</p>"
	want := strings.ReplaceAll(strings.ReplaceAll(fragment, "\r\n", "\n"), "\r", "\n")

	s := newServer(t, Options{}, topics("rows"))
	c := connect(t, s.URL+"?since="+s.streams.Cursor(), nil)
	c.next(t) // hello
	s.streams.Publish(
		Message{Topic: "rows", Event: "csrs-rows", Data: []byte(fragment)},
		Message{Topic: "rows", Event: "marker", Data: []byte("after")},
	)
	ev := c.next(t)
	if ev.Event != "csrs-rows" {
		t.Fatalf("event name %q, want csrs-rows", ev.Event)
	}
	if ev.Data != want {
		t.Fatalf("data changed in transit:\n got %q\nwant %q", ev.Data, want)
	}
	if next := c.next(t); next.Event != "marker" || next.Data != "after" {
		t.Fatalf("the fragment split into more events: next is %+v", next)
	}
	if strings.Contains(ev.ID, "666") {
		t.Fatalf("an id line in user text set the event id: %q", ev.ID)
	}
}

func TestResyncWhenTheClientMayHaveMissedChanges(t *testing.T) {
	s := newServer(t, Options{}, topics("csrs", "rows"))
	before := s.streams.Cursor()
	s.streams.Publish(Message{Topic: "rows", Event: "rows", Data: []byte("a change")})
	after := s.streams.Cursor()

	for _, tc := range []struct {
		name, since string
		resync      bool
	}{
		{"older cursor", before, true},
		{"current cursor", after, false},
		{"cursor of another process", "zzz-1", true},
		{"no cursor", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, s.URL+"?since="+tc.since, nil)
			c.next(t) // hello
			s.streams.Publish(Message{Topic: "csrs", Event: "marker", Data: []byte("m")})
			ev := c.next(t)
			if got := ev.Event == ResyncEvent; got != tc.resync {
				t.Fatalf("first event after hello %+v; resync wanted: %v", ev, tc.resync)
			}
			if tc.resync && ev.Data != "rows" {
				t.Fatalf("resync data %q, want the topic", ev.Data)
			}
		})
	}
}

// The library answers 400 to a Last-Event-ID that is not a number, and a 400
// makes EventSource give up for good. Streams reads the header itself.
func TestLastEventIDIsNotTheLibrarys(t *testing.T) {
	s := newServer(t, Options{}, func(r *http.Request) Subscription {
		return Subscription{Topics: []string{"rows"}, Resync: []string{"rows"}, Since: r.Header.Get("Last-Event-ID")}
	})
	c := connect(t, s.URL, http.Header{"Last-Event-Id": {s.streams.Cursor()}})
	if ev := c.next(t); ev.Event != HelloEvent {
		t.Fatalf("first event %+v", ev)
	}
}

func TestHeartbeat(t *testing.T) {
	s := newServer(t, Options{Heartbeat: 20 * time.Millisecond}, topics("csrs"))
	c := connect(t, s.URL, nil)
	c.next(t)
	s.streams.Publish(Message{Topic: "csrs", Event: "x", Data: []byte("1")})
	c.next(t)
	// Comments are consumed by the reader between events: publish until one was seen.
	eventually(t, "a heartbeat comment", func() bool {
		s.streams.Publish(Message{Topic: "csrs", Event: "x", Data: []byte("1")})
		c.next(t)
		return c.reader.Comments() > 0
	})
	if d := (Options{Heartbeat: time.Hour}).withDefaults().Heartbeat; d != 15*time.Second {
		t.Errorf("heartbeat capped at %v, want 15 s", d)
	}
}

func TestSubscriptionEnds(t *testing.T) {
	var allowed atomic.Bool
	allowed.Store(true)
	s := newServer(t, Options{Heartbeat: 10 * time.Millisecond, Recheck: 10 * time.Millisecond}, func(r *http.Request) Subscription {
		sub := Subscription{Topics: []string{"csrs"}}
		if r.URL.Query().Get("until") != "" {
			sub.Until = time.Now().Add(50 * time.Millisecond)
		} else {
			sub.Check = func(context.Context) bool { return allowed.Load() }
		}
		return sub
	})
	t.Run("until", func(t *testing.T) {
		c := connect(t, s.URL+"?until=1", nil)
		c.next(t)
		c.ended(t)
	})
	t.Run("check fails", func(t *testing.T) {
		c := connect(t, s.URL, nil)
		c.next(t)
		allowed.Store(false)
		c.ended(t)
	})
	eventually(t, "no connections left", func() bool { return s.streams.Stats().Connections == 0 })
}

func TestCloseEndsStreams(t *testing.T) {
	s := newServer(t, Options{}, topics("csrs"))
	c := connect(t, s.URL, nil)
	c.next(t)
	s.streams.Close()
	c.ended(t)
	resp, err := http.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("after Close: status %d, want 503", resp.StatusCode)
	}
}

func TestInvalidMessagesAreDropped(t *testing.T) {
	s := newServer(t, Options{}, topics("csrs"))
	c := connect(t, s.URL+"?since="+s.streams.Cursor(), nil)
	c.next(t)
	s.streams.Publish(
		Message{Topic: "csrs", Event: "x", Data: nil},                     // would end the library's loop
		Message{Topic: "csrs", Event: "bad\nevent: y", Data: []byte("z")}, // would forge a field
		Message{Topic: "csrs", Event: "ok", Data: []byte("fine")},
	)
	if ev := c.next(t); ev.Event != "ok" {
		t.Fatalf("got %+v, want only the valid message", ev)
	}
}

// smallBuffers makes the server's sockets buffer little, so a client that reads
// nothing stalls the server's writes after a few kilobytes, as it would after a
// few megabytes in production.
func smallBuffers(ln net.Listener) net.Listener { return bufLimitListener{ln} }

type bufLimitListener struct{ net.Listener }

func (l bufLimitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// stall opens a connection that sends the request and never reads the answer.
func stall(t *testing.T, url string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
		if err != nil {
			return err
		}
		return serr
	}}
	addr := strings.TrimPrefix(url, "http://")
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", addr)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// healthyReaders connects n clients to url, each read until it ends in a
// goroutine of its own, and returns how many "rows" events each has read.
func healthyReaders(t *testing.T, url string, n int) []atomic.Int64 {
	t.Helper()
	counts := make([]atomic.Int64, n)
	for i := range n {
		c := connect(t, url, nil)
		c.next(t)
		go func() {
			for ev := range c.events {
				if ev.Event == "rows" {
					counts[i].Add(1)
				}
			}
		}()
	}
	return counts
}

// A client that reads nothing is evicted, and until then it delays nobody: the
// healthy clients receive every message while it stalls.
func TestStalledClientIsEvictedOthersKeepReceiving(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		// The queue fills first: eviction on publish.
		{"queue full", Options{Queue: 2, WriteTimeout: time.Minute}},
		// The queue never fills: the write deadline cuts the stalled write.
		// A second, not less: a healthy reader starved of the CPU for longer
		// than the deadline is cut off too, as it should be, and CI's race
		// pass on 2 loaded cores starved one for 300 ms (stop 58). Publishing
		// is paced (below) so the deadline comes before maxQueue messages.
		{"write deadline", Options{Queue: maxQueue, WriteTimeout: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.opts, topics("rows"), smallBuffers)
			const healthy = 3
			counts := healthyReaders(t, s.URL, healthy)
			stall(t, s.URL)
			attached(t, s.streams, healthy+1)

			payload := []byte(strings.Repeat("<tr><td>x</td></tr>\n", 800)) // 16 KiB
			sent := 0
			// Publish in step with the healthy clients (each message after they all
			// received the one before) until the stalled one is gone, then some more.
			after := 0
			for after < 20 {
				if tc.name == "write deadline" {
					time.Sleep(tc.opts.WriteTimeout / 20)
				}
				s.streams.Publish(Message{Topic: "rows", Event: "rows", Data: payload})
				sent++
				eventually(t, "healthy clients keep receiving", func() bool {
					for i := range counts {
						if counts[i].Load() < int64(sent) {
							return false
						}
					}
					return true
				})
				if s.streams.Stats().Connections == healthy {
					after++
				}
				if sent > 5000 {
					t.Fatalf("the stalled client was not evicted after %d messages (stats %+v)", sent, s.streams.Stats())
				}
			}
			eventually(t, "every healthy client received every message", func() bool {
				for i := range counts {
					if counts[i].Load() != int64(sent) {
						return false
					}
				}
				return true
			})
			if tc.name == "queue full" && s.streams.Stats().Evicted == 0 {
				t.Errorf("stats %+v: want an eviction", s.streams.Stats())
			}
			if tc.name == "write deadline" && s.streams.Stats().Evicted != 0 {
				t.Errorf("stats %+v: want the write deadline, not the queue, to cut the stalled client off", s.streams.Stats())
			}
		})
	}
}

// Connections that come and go leave nothing behind: no goroutine of the
// library's (stream loop, subscriber watcher) nor of Streams.
func TestConnectDisconnectCyclesLeaveNoGoroutines(t *testing.T) {
	s := newServer(t, Options{}, topics("csrs", "rows"))
	tr := &http.Transport{}
	hc := &http.Client{Transport: tr}
	cycle := func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		if _, err := sseclient.NewReader(resp.Body).Next(); err != nil {
			t.Error(err)
		}
	}
	settled := func(n int) func() bool {
		return func() bool {
			tr.CloseIdleConnections()
			return runtime.NumGoroutine() <= n && s.streams.Stats().Connections == 0
		}
	}
	cycle() // warm up the transport and the server
	eventually(t, "warm-up connection gone", func() bool { return s.streams.Stats().Connections == 0 })
	tr.CloseIdleConnections()
	baseline := runtime.NumGoroutine()

	var wg sync.WaitGroup
	work := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			for range work {
				cycle()
			}
		})
	}
	for i := range 1000 {
		if i%100 == 0 {
			s.streams.Publish(Message{Topic: "rows", Event: "rows", Data: []byte("change")})
		}
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	deadline := time.Now().Add(15 * time.Second)
	for !settled(baseline)() {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("goroutines %d, baseline %d, stats %+v; stacks:\n%s", runtime.NumGoroutine(), baseline, s.streams.Stats(), buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Replicas behind a balancer each have their own cursors: a tab whose stream
// moves to another replica brings a Last-Event-ID from the first, which the
// second must treat as unknown (resync), while a reconnect to the same
// replica with its current cursor replays nothing.
func TestCursorOfAnotherReplicaResyncs(t *testing.T) {
	sub := func(r *http.Request) Subscription {
		return Subscription{Topics: []string{"csrs", "rows"}, Resync: []string{"rows"}, Since: r.Header.Get("Last-Event-ID")}
	}
	a := newServer(t, Options{}, sub)
	b := newServer(t, Options{}, sub)
	// The same number of messages on both: only the epoch tells them apart.
	a.streams.Publish(Message{Topic: "rows", Event: "rows", Data: []byte("x")})
	b.streams.Publish(Message{Topic: "rows", Event: "rows", Data: []byte("x")})
	fromA := a.streams.Cursor()
	if fromA == b.streams.Cursor() {
		t.Fatalf("two replicas share the cursor %q", fromA)
	}
	for _, tc := range []struct {
		name   string
		srv    *server
		resync bool
	}{
		{"same replica", a, false},
		{"another replica", b, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, tc.srv.URL, http.Header{"Last-Event-Id": {fromA}})
			c.next(t) // hello
			tc.srv.streams.Publish(Message{Topic: "csrs", Event: "marker", Data: []byte("m")})
			if ev := c.next(t); (ev.Event == ResyncEvent) != tc.resync {
				t.Fatalf("first event after hello %+v; resync wanted: %v", ev, tc.resync)
			}
		})
	}
}

// A detail page that shows what the cache holds needs no resync whatever its
// cursor (Subscription.Shown); one whose object changed does. The answer must
// be taken as the connection joins, under the lock Publish holds: taken
// before Serve (as the handler once did), a change published in between
// reached the page neither as a resync nor as a message, and the page kept
// showing the old object (seen as a CSR page stuck on Pending after approval).
func TestShownIsAskedAsTheConnectionJoins(t *testing.T) {
	var shown, askedUnlocked atomic.Bool
	var asked atomic.Int32
	var s *server
	s = newServer(t, Options{}, func(r *http.Request) Subscription {
		return Subscription{Topics: []string{"csrs", "rows"}, Resync: []string{"rows"}, Since: r.URL.Query().Get("since"),
			Shown: func(topic string) bool {
				asked.Add(1)
				if s.streams.mu.TryLock() { // Publish could run between this answer and the join
					s.streams.mu.Unlock()
					askedUnlocked.Store(true)
				}
				return topic == "rows" && shown.Load()
			}}
	})
	before := s.streams.Cursor()
	s.streams.Publish(Message{Topic: "rows", Event: "rows", Data: []byte("a change after the page's cursor")})
	for _, tc := range []struct {
		name         string
		shown        bool
		since        string
		resync, asks bool
	}{
		{"the page shows the cache's version", true, before, false, true},
		{"the object changed since the page", false, before, true, true},
		{"a cursor of another replica, the cache's version", true, "zzz-1", false, true},
		{"nothing missed: not asked", false, s.streams.Cursor(), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown.Store(tc.shown)
			asked.Store(0)
			c := connect(t, s.URL+"?since="+tc.since, nil)
			defer c.close()
			c.next(t) // hello
			s.streams.Publish(Message{Topic: "csrs", Event: "marker", Data: []byte("m")})
			if ev := c.next(t); (ev.Event == ResyncEvent) != tc.resync {
				t.Fatalf("first event after hello %+v; resync wanted: %v", ev, tc.resync)
			}
			if got := asked.Load() > 0; got != tc.asks {
				t.Errorf("Shown asked: %v, want %v", got, tc.asks)
			}
		})
	}
	if askedUnlocked.Load() {
		t.Fatal("Shown was asked while Publish could run: a change published before the join would be lost")
	}
}

// Behind counts the connections that have yet to take the last message: none
// once every client has read it, the stalled one while it stalls.
func TestBehindCountsTheConnectionsThatHaveNotTakenTheLastMessage(t *testing.T) {
	s := newServer(t, Options{Queue: maxQueue, WriteTimeout: time.Minute}, topics("rows"), smallBuffers)
	const healthy = 2
	counts := healthyReaders(t, s.URL, healthy)
	attached(t, s.streams, healthy)
	if behind, of := s.streams.Behind(); behind != 0 || of != healthy {
		t.Fatalf("before any message: %d behind of %d", behind, of)
	}
	stall(t, s.URL)
	attached(t, s.streams, healthy+1)
	payload := []byte(strings.Repeat("<tr><td>x</td></tr>\n", 800)) // 16 KiB: more than the stalled socket takes
	for sent := 1; sent <= 10; sent++ {
		s.streams.Publish(Message{Topic: "rows", Event: "rows", Data: payload})
		eventually(t, "healthy clients receive", func() bool {
			return counts[0].Load() == int64(sent) && counts[1].Load() == int64(sent)
		})
	}
	eventually(t, "the stalled connection counted behind, the healthy ones not", func() bool {
		behind, of := s.streams.Behind()
		return behind == 1 && of == healthy+1
	})
}
