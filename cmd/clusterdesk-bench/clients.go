package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/live/sseclient"
)

// write is one annotation patch the driver sent: seq counts writes, at is when
// the request left, slot is the CSR's (board.index).
type write struct {
	seq  int64
	at   time.Time
	slot int
}

// board is what the driver and the clients share: the latest write per CSR,
// and every write in order (for the count against the publish log, tally).
type board struct {
	index  map[string]int // CSR name → slot
	latest []atomic.Pointer[write]

	mu  sync.Mutex
	all []write
}

// add puts a write on the board just before it is sent.
func (b *board) add(w *write) {
	b.latest[w.slot].Store(w)
	b.mu.Lock()
	b.all = append(b.all, *w)
	b.mu.Unlock()
}

// writesSince returns the writes from the i-th on.
func (b *board) writesSince(i int) []write {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]write(nil), b.all[i:]...)
}

// writes returns how many writes the board holds.
func (b *board) writes() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.all)
}

func newBoard(names []string) *board {
	b := &board{index: map[string]int{}, latest: make([]atomic.Pointer[write], len(names))}
	for i, n := range names {
		b.index[n] = i
	}
	return b
}

// sample is one client's latency for one write.
type sample struct {
	seq int64
	lat time.Duration // the write leaving the driver → the event read
}

// client is one browser tab's event stream.
type client struct {
	cancel func() // closes its connection
	hello  chan struct{}
	done   chan struct{}
	seen   []int64      // per CSR, the last write counted
	lat    []sample     // one per write seen (read after done)
	got    atomic.Int64 // len(lat), for reading while the client runs
	// What the tab read, by event id: the hello's sequence and every rows
	// event's (the count against the publish log, tally).
	mu    sync.Mutex
	tab   tabLog
	reads atomic.Int64 // len(tab.got), for reading while the client runs
	// refused: the console refused the tab over its session's tab limit.
	refused atomic.Bool
}

var rowPrefix = []byte(`id="row-csrs-`)

// newSession signs a simulated browser in: a session of its own.
func newSession(hc *http.Client, sessionURL string) (string, error) {
	resp, err := hc.Get(sessionURL)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("new session: status %d: %s", resp.StatusCode, raw)
	}
	return string(raw), nil
}

// signer signs a simulated browser in: it sets what authenticates its requests.
type signer func(req *http.Request) error

// sessionSigner gives each browser a session of its own, minted by the serving child.
func sessionSigner(hc *http.Client, sessionURL string) signer {
	return func(req *http.Request) error {
		cookie, err := newSession(hc, sessionURL)
		if err != nil {
			return err
		}
		req.Header.Set("Cookie", cookie)
		return nil
	}
}

// dial signs a new browser in and opens the CSR stream, as a tab on /csrs does.
//
// On a connection of its own, read by the tab's one goroutine: net/http's
// Transport would add two goroutines per tab (its read and write loops) and
// read through its 4 KiB buffer, so an event larger than that took several
// reads, with a copy and a lock at each layer; at 5,000 tabs that was CPU the
// console's latency waited for. The request and the response's head are
// net/http's (Request.Write, ReadResponse); the chunked body is decoded in
// the tab's one buffer (dechunker).
func dial(base string, sign signer, b *board) (*client, error) {
	req, err := http.NewRequest(http.MethodGet, base+"/events?kinds=csrs&rows=csrs", nil)
	if err != nil {
		return nil, err
	}
	if err := sign(req); err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	conn, err := net.DialTimeout("tcp", req.URL.Host, 5*time.Second)
	if err != nil {
		return nil, err
	}
	// The handshake has a deadline; the stream, once open, has none.
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, err
	}
	br := bufio.NewReader(conn) // the response's head; dropped once it is read
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		conn.Close()
		return nil, fmt.Errorf("/events: status %d", resp.StatusCode)
	}
	_ = conn.SetDeadline(time.Time{})
	var body io.ReadCloser = resp.Body
	if len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked" {
		// The console's stream (and HAProxy's relay of it): decoded in the
		// tab's own buffer, from what br read past the head on.
		head, _ := br.Peek(br.Buffered())
		rest := io.MultiReader(bytes.NewReader(bytes.Clone(head)), conn)
		body = struct {
			io.Reader
			io.Closer
		}{&dechunker{r: rest}, conn}
	}
	// A tab over the per-session limit gets a stream that says so and nothing
	// else: it would never say hello, so name the cause instead of timing out.
	c := &client{cancel: func() { conn.Close() }, hello: make(chan struct{}), done: make(chan struct{}), seen: make([]int64, len(b.latest))}
	go c.read(body, b)
	return c, nil
}

// Event names a tab acts on, as bytes: compared with a frame's without a conversion.
var (
	helloEvent     = []byte("hello")
	tooManyStreams = []byte("too-many-streams")
	rowsEventName  = []byte(rowsEvent)
)

// tabBuffer is each tab's read buffer, the only one its stream passes
// through: a rows event (some 4 KB, written by the console in one write) is
// one read. A longer event is gathered (sseclient.Frames): this bounds
// nothing but the bench's memory per tab.
const tabBuffer = 16 << 10

// read is the tab: it reads every byte of the stream, parses its frames,
// and records each rows event's id and arrival, until the stream ends.
func (c *client) read(body io.ReadCloser, b *board) {
	defer close(c.done)
	defer body.Close()
	r := sseclient.NewFrames(body, tabBuffer)
	var f sseclient.Frame
	for {
		if err := r.Next(&f); err != nil {
			return
		}
		switch {
		case bytes.Equal(f.Event, helloEvent):
			c.mu.Lock()
			c.tab.hello, _ = cursorSeqBytes(f.ID)
			c.mu.Unlock()
			close(c.hello)
		case bytes.Equal(f.Event, tooManyStreams):
			c.refused.Store(true)
			return
		case bytes.Equal(f.Event, rowsEventName):
			seq, _ := cursorSeqBytes(f.ID)
			c.mu.Lock()
			c.tab.got = append(c.tab.got, receipt{seq: seq, at: f.At})
			c.mu.Unlock()
			c.reads.Add(1)
			c.record(f.Data, f.At, b)
		}
	}
}

// record counts, for each bench CSR row in an event's data, the write it answers.
func (c *client) record(data []byte, at time.Time, b *board) {
	for {
		i := bytes.Index(data, rowPrefix)
		if i < 0 {
			return
		}
		data = data[i+len(rowPrefix):]
		end := bytes.IndexByte(data, '"')
		if end < 0 {
			return
		}
		slot, ok := b.index[string(data[:end])] // a lookup, not a conversion: no allocation
		if !ok {
			continue
		}
		w := b.latest[slot].Load()
		if w == nil || w.seq <= c.seen[slot] || at.Before(w.at) {
			continue
		}
		c.seen[slot] = w.seq
		c.lat = append(c.lat, sample{seq: w.seq, lat: at.Sub(w.at)})
		c.got.Add(1)
	}
}

func (c *client) close() {
	c.cancel()
	<-c.done
}

// connect opens n clients, each a browser of its own, a few at a time, and
// waits until each is subscribed.
func connect(base string, sign signer, b *board, n int) ([]*client, error) {
	clients, err := openAll(n, func(int) (*client, error) { return dial(base, sign, b) })
	if err != nil {
		closeAll(clients)
		return nil, err
	}
	deadline := time.After(60 * time.Second)
	for _, c := range clients {
		select {
		case <-c.hello:
		case <-c.done:
			closeAll(clients)
			if c.refused.Load() {
				return nil, fmt.Errorf("the console refused a client over its session's tab limit")
			}
			return nil, fmt.Errorf("a client's stream ended before it subscribed")
		case <-deadline:
			closeAll(clients)
			return nil, fmt.Errorf("not all %d clients subscribed within 60 s", n)
		}
	}
	return clients, nil
}

func closeAll(cs []*client) {
	for _, c := range cs {
		if c != nil {
			c.close()
		}
	}
}

// stall opens a stream that is never read, with a small receive buffer so the
// server's writes to it block after kilobytes rather than megabytes.
func stall(hc *http.Client, base, sessionURL string) (net.Conn, error) {
	cookie, err := newSession(hc, sessionURL)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		}); err != nil {
			return err
		}
		return serr
	}}
	addr := strings.TrimPrefix(base, "http://")
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	_, err = fmt.Fprintf(conn, "GET /events?kinds=csrs&rows=csrs HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nCookie: %s\r\n\r\n", addr, cookie)
	return conn, err
}

// queued returns the bytes waiting in both ends of a loopback TCP connection:
// the server's send queue and the client's receive queue (Linux /proc/net/tcp).
func queued(conn net.Conn) (send, recv int64, err error) {
	raw, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0, 0, err
	}
	client := conn.LocalAddr().(*net.TCPAddr)
	server := conn.RemoteAddr().(*net.TCPAddr)
	hexAddr := func(a *net.TCPAddr) string {
		ip := a.IP.To4()
		return fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], a.Port)
	}
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		tx, rx, _ := strings.Cut(f[4], ":")
		switch {
		case f[1] == hexAddr(server) && f[2] == hexAddr(client):
			send, _ = strconv.ParseInt(tx, 16, 64)
		case f[1] == hexAddr(client) && f[2] == hexAddr(server):
			recv, _ = strconv.ParseInt(rx, 16, 64)
		}
	}
	return send, recv, nil
}

// openAll opens n connections, 32 at a time (as many browsers starting at
// once would, without one dial per goroutine all at the same instant), and
// returns them in order with the first error. On an error the slice holds
// the ones that opened (nil elsewhere), for the caller to close.
func openAll[T any](n int, open func(i int) (T, error)) ([]T, error) {
	out := make([]T, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			v, err := open(i)
			if err != nil {
				errs <- err
				return
			}
			out[i] = v
		}()
	}
	wg.Wait()
	close(errs)
	return out, <-errs
}
