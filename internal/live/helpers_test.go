package live

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// server serves Streams on a real loopback listener (write deadlines need a TCP
// connection). subscribe builds each request's subscription.
type server struct {
	*httptest.Server
	streams *Streams
}

func newServer(t *testing.T, opts Options, subscribe func(*http.Request) Subscription, wrap ...func(net.Listener) net.Listener) *server {
	t.Helper()
	if opts.Log == nil {
		opts.Log = quietLog()
	}
	s := &server{streams: NewStreams(opts)}
	netHTTP := viaNetHTTP
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if netHTTP {
			w = noHijack{w}
		}
		s.streams.Serve(w, r, subscribe(r))
	}))
	for _, f := range wrap {
		s.Listener = f(s.Listener)
	}
	s.Start()
	t.Cleanup(func() {
		s.streams.Close()
		s.Close()
	})
	return s
}

// viaNetHTTP makes newServer's streams go through net/http's ResponseWriter,
// as HTTP/2 ones do, instead of the hijacked connection (TestNetHTTPPath).
var viaNetHTTP bool

// noHijack is a ResponseWriter that cannot be hijacked but flushes and takes
// write deadlines, as HTTP/2's does.
type noHijack struct{ w http.ResponseWriter }

func (n noHijack) Header() http.Header         { return n.w.Header() }
func (n noHijack) Write(p []byte) (int, error) { return n.w.Write(p) }
func (n noHijack) WriteHeader(code int)        { n.w.WriteHeader(code) }
func (n noHijack) FlushError() error           { return http.NewResponseController(n.w).Flush() }
func (n noHijack) SetWriteDeadline(t time.Time) error {
	return http.NewResponseController(n.w).SetWriteDeadline(t)
}

// client is one EventSource-like connection whose events arrive on a channel.
type client struct {
	resp   *http.Response
	events chan sseclient.Event
	done   chan error // the stream's end
	cancel context.CancelFunc
	reader *sseclient.Reader
}

func connect(t *testing.T, url string, header http.Header) *client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("connect: status %d", resp.StatusCode)
	}
	c := &client{resp: resp, events: make(chan sseclient.Event, 1024), done: make(chan error, 1), cancel: cancel,
		reader: sseclient.NewReader(resp.Body)}
	go func() {
		for {
			ev, err := c.reader.Next()
			if err != nil {
				close(c.events)
				c.done <- err
				return
			}
			c.events <- ev
		}
	}()
	t.Cleanup(c.close)
	return c
}

func (c *client) close() {
	c.cancel()
	_ = c.resp.Body.Close()
}

// next returns the next event or fails the test after a generous deadline.
func (c *client) next(t *testing.T) sseclient.Event {
	t.Helper()
	select {
	case ev, ok := <-c.events:
		if !ok {
			t.Fatalf("stream ended: %v", <-c.done)
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return sseclient.Event{}
}

// ended waits for the server to end the stream.
func (c *client) ended(t *testing.T) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-c.events:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("stream did not end within 10 s")
		}
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 15 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// attached waits until n connections are receiving messages.
func attached(t *testing.T, s *Streams, n int) {
	t.Helper()
	eventually(t, "connections attached", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		k := 0
		for _, c := range s.conns {
			if c.attached {
				k++
			}
		}
		return k == n
	})
}
