package live

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The hijacked connection's response, read by net/http's own client: status,
// the headers set before and after the hijack, chunked framing that net/http
// decodes, each flush reaching the client before the next write, a batch
// larger than rawBatchMax, and a clean end (the last chunk: no unexpected EOF).
func TestRawResponseIsHTTP11ForNetHTTPsClient(t *testing.T) {
	step := make(chan struct{})
	big := strings.Repeat("x", 3*rawBatchMax+17)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'") // as the middleware sets
		w.Header().Set("Content-Length", "99")                          // never sent with a chunked body
		raw := hijackStream(w, r)
		if raw == nil {
			t.Error("an HTTP/1.1 GET was not hijacked")
			return
		}
		go func() {
			defer raw.finish(time.Second, false)
			raw.Header().Set("Content-Type", "text/event-stream")
			raw.Header().Set("Bad", "a\r\nInjected: 1")
			raw.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(raw, "data: one\n")
			_, _ = io.WriteString(raw, "\n")
			raw.Flush()
			<-step // the client has read the first event: it was flushed alone
			for i := range 3 {
				_, _ = fmt.Fprintf(raw, "data: %d %s\n\n", i, big)
			}
			raw.Flush()
		}()
	}))
	defer srv.Close()

	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Proto != "HTTP/1.1" {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Proto)
	}
	if got := resp.TransferEncoding; len(got) != 1 || got[0] != "chunked" {
		t.Errorf("transfer encoding %v, want chunked", got)
	}
	if !resp.Close {
		t.Error("the response does not say the connection closes after it")
	}
	for k, want := range map[string]string{"Content-Type": "text/event-stream", "Content-Security-Policy": "default-src 'self'", "Content-Length": "", "Injected": ""} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if resp.Header.Get("Date") == "" {
		t.Error("no Date header")
	}
	br := bufio.NewReader(resp.Body)
	for _, want := range []string{"data: one\n", "\n"} {
		line, err := br.ReadString('\n')
		if err != nil || line != want {
			t.Fatalf("read %q, %v; want %q", line, err, want)
		}
	}
	close(step)
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("the body did not end cleanly: %v", err)
	}
	want := ""
	for i := range 3 {
		want += fmt.Sprintf("data: %d %s\n\n", i, big)
	}
	if string(rest) != want {
		t.Fatalf("body after the first event: %d bytes, want %d", len(rest), len(want))
	}
}

// A stream over HTTP/1.1 is served on its hijacked connection: the handler
// returns at once, the stream goes on, the client leaving ends it (the read
// that replaces net/http's), and Done runs once, then.
func TestHTTP11StreamOutlivesItsHandler(t *testing.T) {
	var done, returned atomic.Int32
	s := &server{streams: NewStreams(Options{Log: quietLog()})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.streams.Serve(w, r, Subscription{Topics: []string{"rows"}, Done: func() { done.Add(1) }})
		returned.Add(1)
	}))
	t.Cleanup(func() { s.streams.Close(); s.Close() })

	c := connect(t, s.URL, nil)
	if ev := c.next(t); ev.Event != HelloEvent {
		t.Fatalf("first event %+v", ev)
	}
	eventually(t, "the handler returned", func() bool { return returned.Load() == 1 })
	s.streams.Publish(Message{Topic: "rows", Event: "rows", Data: []byte("after the handler")})
	if ev := c.next(t); ev.Data != "after the handler" {
		t.Fatalf("event %+v", ev)
	}
	if c.resp.Proto != "HTTP/1.1" || done.Load() != 0 {
		t.Fatalf("proto %s, done %d", c.resp.Proto, done.Load())
	}
	c.close()
	eventually(t, "the stream ended with its client", func() bool { return s.streams.Stats().Connections == 0 })
	eventually(t, "Done ran", func() bool { return done.Load() == 1 })
	time.Sleep(50 * time.Millisecond)
	if n := done.Load(); n != 1 {
		t.Fatalf("Done ran %d times", n)
	}
}

// HTTP/2 connections cannot be hijacked: they stream as before, the handler
// returning when the stream ends.
func TestHTTP2StreamStillStreams(t *testing.T) {
	var done, returned atomic.Int32
	s := &server{streams: NewStreams(Options{Log: quietLog()})}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.streams.Serve(w, r, Subscription{Topics: []string{"rows"}, Done: func() { done.Add(1) }})
		returned.Add(1)
	}))
	s.EnableHTTP2 = true
	s.StartTLS()
	t.Cleanup(func() { s.streams.Close(); s.Close() })

	req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 {
		t.Fatalf("proto %s, want HTTP/2", resp.Proto)
	}
	br := bufio.NewReader(resp.Body)
	readUntil := func(want string) {
		t.Helper()
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("reading for %q: %v", want, err)
			}
			if line == want {
				return
			}
		}
	}
	readUntil("event: " + HelloEvent + "\n")
	s.streams.Publish(Message{Topic: "rows", Event: "rows", Data: []byte("over h2")})
	readUntil("data: over h2\n")
	if returned.Load() != 0 || done.Load() != 0 {
		t.Fatal("the handler of an HTTP/2 stream returned while it streams")
	}
	resp.Body.Close()
	eventually(t, "the HTTP/2 stream ended with its client", func() bool { return returned.Load() == 1 && done.Load() == 1 })
}

// A TLS HTTP/1.1 connection is hijacked too (the *tls.Conn): the stream works.
func TestHTTP11OverTLSIsHijacked(t *testing.T) {
	var returned atomic.Int32
	s := &server{streams: NewStreams(Options{Log: quietLog()})}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.streams.Serve(w, r, Subscription{Topics: []string{"rows"}})
		returned.Add(1)
	}))
	s.StartTLS() // no HTTP/2
	t.Cleanup(func() { s.streams.Close(); s.Close() })
	conn, err := tls.Dial("tcp", s.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "event: "+HelloEvent+"\n" {
			break
		}
	}
	eventually(t, "the handler returned", func() bool { return returned.Load() == 1 })
	s.streams.Publish(Message{Topic: "rows", Event: "rows", Data: []byte("over tls")})
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "data: over tls\n" {
			break
		}
	}
	conn.Close()
	eventually(t, "the stream ended with its client", func() bool { return s.streams.Stats().Connections == 0 })
}

// A refused connection's Done runs at once.
func TestDoneRunsForARefusal(t *testing.T) {
	var done atomic.Int32
	s := newServer(t, Options{MaxStreams: 1}, func(*http.Request) Subscription {
		return Subscription{Topics: []string{"rows"}, Done: func() { done.Add(1) }}
	})
	c := connect(t, s.URL, nil)
	c.next(t)
	resp, err := http.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := done.Load(); n != 1 {
		t.Fatalf("Done ran %d times for the refusal, want 1", n)
	}
}

// The streams' behaviour through net/http's ResponseWriter (HTTP/2's way, which
// cannot be hijacked): the tests of delivery, joining, eviction, ends and
// leaks, run again on that path.
func TestNetHTTPPath(t *testing.T) {
	viaNetHTTP = true
	defer func() { viaNetHTTP = false }()
	for name, test := range map[string]func(*testing.T){
		"HelloStickyThenLive":               TestHelloStickyThenLive,
		"JoiningABusyGroupNoGapNoRepeat":    TestJoiningABusyGroupNoGapNoRepeat,
		"StalledClientIsEvicted":            TestStalledClientIsEvictedOthersKeepReceiving,
		"EndClosesAfterAGoodbye":            TestEndClosesOneOwnersStreamsAfterAGoodbye,
		"CloseEndsStreams":                  TestCloseEndsStreams,
		"SubscriptionEnds":                  TestSubscriptionEnds,
		"ConnectDisconnectLeaveNoGoroutine": TestConnectDisconnectCyclesLeaveNoGoroutines,
		"EndedConnectionsFreeTheirPlaces":   TestEndedConnectionsFreeTheirPlaces,
	} {
		t.Run(name, test)
	}
}
