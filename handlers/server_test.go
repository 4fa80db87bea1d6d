package handlers

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/live"
	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
)

// testReadTimeout is the server's ReadTimeout in these tests: short, so a
// stream that outlives it by far is seen in a couple of seconds.
const testReadTimeout = 300 * time.Millisecond

// clientPatience is how long a test client waits for the server before it
// calls the server stuck. It is a bound on a hang, not a speed measurement.
const clientPatience = 30 * time.Second

// slowServer is the console (token mode, live updates on) behind the
// production http.Server (NewServer) with a short ReadTimeout, on a real port.
type slowServer struct {
	addr    string
	cookie  *http.Cookie
	streams *live.Streams
	lv      *LiveUpdates
	reviews atomic.Int64
}

func newSlowServer(t *testing.T) *slowServer {
	t.Helper()
	s := &slowServer{}
	cl := newLiveCluster("csr-a")
	s.streams = live.NewStreams(live.Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Heartbeat: 100 * time.Millisecond})
	s.lv = NewLiveUpdates(cl, s.streams)
	s.streams.Publish(s.lv.Render(kube.CSRs, nil, true)...)
	h := newConsole(t, Deps{Cluster: cl, Access: allowKinds{"certificatesigningrequests": true}, User: "console", Live: s.lv},
		tokenMode(func(ctx context.Context, token string) (kube.Identity, error) {
			s.reviews.Add(1)
			return reviewTokens(ctx, token)
		})).e
	timeouts := DefaultServerTimeouts
	timeouts.Read = testReadTimeout
	srv := NewServer(h, timeouts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { s.streams.Close(); _ = srv.Close() })
	s.addr = ln.Addr().String()

	rec := (&modeServer{testServer: &testServer{e: h}}).tokenLogin(t, goodToken, http.StatusSeeOther)
	s.cookie = rec
	s.reviews.Store(0)
	return s
}

// trickle sends a request head with a chunked body, then one byte of body
// every 50 ms until the server closes the connection or patience runs out.
// It returns what the server answered (nil if nothing) and whether the
// server ended the connection.
func (s *slowServer) trickle(t *testing.T, head string) (*http.Response, bool) {
	t.Helper()
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, head+"Transfer-Encoding: chunked\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := io.WriteString(conn, "1\r\nx\r\n"); err != nil {
				return
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(clientPatience))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, false
		}
		return nil, true // closed without an answer
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// After its answer the server must not wait for the rest of the body.
	_, err = br.ReadByte()
	var ne net.Error
	return resp, !(errors.As(err, &ne) && ne.Timeout())
}

// TestSlowBodiesAreCutOff: a client that trickles a body forever is not
// served forever. Without a session its body is never read: the 401 comes
// while the body is still arriving. The public sign-in form's body is read,
// but only until ReadTimeout, and then the connection is closed, without the
// API server asked anything.
func TestSlowBodiesAreCutOff(t *testing.T) {
	s := newSlowServer(t)

	resp, closed := s.trickle(t, "POST /csrs/csr-a/approve HTTP/1.1\r\nHost: "+s.addr+"\r\nContent-Type: application/x-www-form-urlencoded\r\n")
	if resp == nil {
		t.Fatalf("no answer to a request without a session within %v while its body trickled in: the server is reading it", clientPatience)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a request without a session: status %d, want 401", resp.StatusCode)
	}
	if !closed {
		t.Errorf("the server kept the connection open for %v reading the rest of a trickled body", clientPatience)
	}

	resp, closed = s.trickle(t, "POST /login HTTP/1.1\r\nHost: "+s.addr+"\r\nContent-Type: application/x-www-form-urlencoded\r\nSec-Fetch-Site: same-origin\r\n")
	if !closed {
		t.Fatalf("the server kept reading a trickled sign-in body for %v (answer: %v)", clientPatience, resp != nil)
	}
	if resp != nil && resp.StatusCode < 400 {
		t.Errorf("a sign-in whose body never ended: status %d, want a refusal", resp.StatusCode)
	}
	if n := s.reviews.Load(); n != 0 {
		t.Errorf("an unfinished sign-in reached the token review %d times", n)
	}
}

// TestEventStreamOutlivesReadTimeout: ReadTimeout must not end an event
// stream (net/http cancels a request's context when its connection's read
// deadline passes): a stream open for ten times ReadTimeout still delivers.
func TestEventStreamOutlivesReadTimeout(t *testing.T) {
	s := newSlowServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), clientPatience)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+"/events?kinds=csrs", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.AddCookie(s.cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("event stream: status %d", resp.StatusCode)
	}
	events := sseclient.NewReader(resp.Body)
	if hello, err := events.Next(); err != nil || hello.Event != live.HelloEvent {
		t.Fatalf("first event %+v %v: want hello", hello, err)
	}
	time.Sleep(10 * testReadTimeout) // waiting past the deadline, not measuring anything
	// A message published only now: what came before the wait proves nothing.
	s.streams.Publish(live.Message{Topic: statusTopic, Event: "after-the-wait", Data: []byte("x")})
	for {
		ev, err := events.Next()
		if err != nil {
			t.Fatalf("the event stream ended while open for %v (ReadTimeout %v): %v", 10*testReadTimeout, testReadTimeout, err)
		}
		if ev.Event == sessionEndedEvent {
			t.Fatalf("the stream said the session ended")
		}
		if ev.Event == "after-the-wait" {
			return
		}
	}
}
