package live

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/r3labs/sse/v2"
)

// Options tune Streams; zero values take the defaults.
type Options struct {
	Log *slog.Logger
	// Heartbeat is how often a comment goes to every connection (default and
	// maximum 15 s); session ends (Subscription.Until) are checked as often.
	Heartbeat time.Duration
	// Recheck is how often each connection's Subscription.Check runs (default 1 min).
	Recheck time.Duration
	// WriteTimeout bounds one write to a connection (default 10 s); a client that
	// reads nothing is cut off when its TCP buffers are full and this much time passes.
	WriteTimeout time.Duration
	// Queue is how many events may wait for one connection (default and at
	// most maxQueue: they wait in the library's 64 slots per subscriber, which
	// the group's stream shares, see group.go); a connection that falls
	// further behind is evicted and its page resyncs when EventSource reconnects.
	Queue int
	// MaxPerUser is how many connections one user (Subscription.User, the
	// Kubernetes username the console acts as) may hold at once on this
	// process, whatever sessions they come from (default 12); one more gets
	// Subscription.Refusal. Each tab holds one, so this bounds what one
	// person's tabs, or one stolen identity's requests, pin on the server,
	// far above what a person uses.
	MaxPerUser int
	// MaxStreams is how many connections this process serves at once, all
	// users together (default DefaultMaxStreams); one more gets
	// Subscription.Busy. It bounds the memory streams pin (each idle one
	// holds goroutines and buffers) below the pod's limit.
	MaxStreams int
}

// DefaultMaxPerUser is Options.MaxPerUser's default.
const DefaultMaxPerUser = 12

// DefaultMaxStreams is Options.MaxStreams's default, sized for the pod of
// deploy/base (512 MiB limit, GOMEMLIMIT 400 MiB, of which the cache and pages
// take up to 300 MiB on the worst shapes of make bench-pages) and for the
// dearer of the two ways a stream is served: over HTTP/2 (TLS served by the
// console itself) an idle stream costs about 51 KiB of RSS (its handler's
// goroutine with the middleware chain on its stack, net/http's buffers and
// request), so 1,500 take some 75 MiB, within the 100 MiB left with room for
// the fan-out's garbage. An HTTP/1.1 stream (plain HTTP, or behind a proxy
// that speaks HTTP/1.1 to the console) is served on its hijacked connection
// (hijack.go) for about 15 KiB (make bench's serving child, 1,000 and 5,000
// idle streams): 5,000 of those take what 1,500 did before.
const DefaultMaxStreams = 1500

const maxHeartbeat = 15 * time.Second

func (o Options) withDefaults() Options {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Heartbeat <= 0 || o.Heartbeat > maxHeartbeat {
		o.Heartbeat = maxHeartbeat
	}
	if o.Recheck <= 0 {
		o.Recheck = time.Minute
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.Queue <= 0 || o.Queue > maxQueue {
		o.Queue = maxQueue
	}
	if o.MaxPerUser <= 0 {
		o.MaxPerUser = DefaultMaxPerUser
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	return o
}

// Subscription is what one connection receives and for how long.
type Subscription struct {
	// Topics the connection receives messages of.
	Topics []string
	// Resync lists topics (among Topics) whose messages are changes rather than
	// states: if the connection may have missed one (Since too old, or from another
	// process), it gets a resync event for the topic first.
	Resync []string
	// Since is the cursor the client is up to date with: Last-Event-ID on a
	// reconnect, else the cursor the page was rendered at.
	Since string
	// Shown, if set, is asked of each Resync topic the connection might be
	// told to resync when it joins: true means the page shows exactly what the
	// cache holds now (a detail page's object at the version in the cache), so
	// it needs no resync whatever its cursor (one of another replica, say). It
	// is asked under the lock Publish holds, as the connection joins: a change
	// the cache takes before that makes it false, and one after it reaches the
	// connection as a message. (Asked before Serve, a change published in
	// between would reach neither way: the page kept the old object.) It must
	// be quick and must not call Streams.
	Shown func(topic string) bool
	// Hello is the data of the first event; empty sends "-".
	Hello string
	// Until ends the connection (quietly: EventSource reconnects and the request is
	// authenticated afresh); zero means never.
	Until time.Time
	// Check, if set, runs every Options.Recheck; false ends the connection, which
	// reconnects with what the user may still see.
	Check func(context.Context) bool
	// Owner names the session the connection belongs to, whose sign-out ends
	// it (End); empty is ended by nothing.
	Owner string
	// User groups the connections that count together against
	// Options.MaxPerUser (the Kubernetes username, across sessions); empty
	// counts against Options.MaxStreams only.
	User string
	// Refusal is what a connection over Options.MaxPerUser gets instead of
	// the stream (see Reply): it should tell the user why, as EventSource
	// shows nothing itself.
	Refusal []Message
	// Busy is what a connection over Options.MaxStreams gets instead of the
	// stream.
	Busy []Message
	// Done, if set, runs once when the connection ends (at once for one
	// refused): Serve may return before then (an HTTP/1.1 stream is served by
	// a goroutine of its own), so what the stream holds is released here, not
	// when the handler returns.
	Done func()
}

// Stats are counters for tests and the benchmark.
type Stats struct {
	Connections int   // connections being served
	Users       int   // users holding at least one of them
	Refused     int64 // connections refused over MaxPerUser, since start
	Busy        int64 // connections refused over MaxStreams, since start
	Evicted     int64 // connections cut off for falling behind, since start
	Published   int64 // messages published, since start
	Sent        int64 // events queued to connections (heartbeats not counted), since start
	Flushes     int64 // writes flushed to connections (each a syscall at least), since start
}

// Streams serves server-sent event connections and publishes messages to them.
// The connections of one topic set share a library stream (group.go);
// publishing hands a message to each group's stream once, a connection that
// falls behind is evicted before it could hold its group's stream up, so a
// stalled client never delays another. Safe for concurrent use.
type Streams struct {
	opts  Options
	srv   *sse.Server
	epoch string

	mu      sync.Mutex
	closed  bool
	nextID  uint64
	seq     uint64
	conns   map[string]*conn // by id, from Serve until it returns
	users   map[string]int   // connections per Subscription.User, from Serve until it returns
	groups  map[string]*group
	topics  map[string]map[*group]struct{} // the groups receiving each topic
	sticky  map[stickyKey]*sse.Event
	lastSeq map[string]uint64 // per topic, the seq of its last non-sticky message

	evicted   atomic.Int64
	refused   atomic.Int64
	busy      atomic.Int64
	published atomic.Int64
	sent      atomic.Int64
	flushes   atomic.Int64
	stop      chan struct{}
	stopped   chan struct{}
}

type stickyKey struct{ topic, event string }

// conn is one connection being served.
type conn struct {
	id       string
	sub      Subscription
	ctx      context.Context
	cancel   context.CancelFunc
	rc       *http.ResponseController
	g        *group
	evicted  atomic.Bool
	attached bool // receiving messages (under Streams.mu)
	joined   bool // in its group's conns, whose pushes it drains (under Streams.mu)
	done     bool // Serve is returning (under Streams.mu)
	ended    bool // its owner's session ended (End, under Streams.mu)

	// For its writer: the key of the last group event it took (group.go);
	// left: it receives no further group event (writes none); own: events of
	// its own to write ahead of the next group event (End's goodbye).
	mark atomic.Uint64
	left atomic.Bool
	own  atomic.Pointer[[]byte]
}

// NewStreams returns Streams and starts its heartbeat; Close stops it.
func NewStreams(opts Options) *Streams {
	opts = opts.withDefaults()
	srv := sse.New()
	srv.AutoReplay = false // the default keeps every event forever
	srv.AutoStream = false // only the server names streams
	srv.SplitData = false  // Publish splits the data itself, once per event (encodeData)
	srv.EncodeBase64 = false
	srv.BufferSize = streamBuffer
	srv.Headers = map[string]string{
		"Cache-Control":     "no-store",
		"X-Accel-Buffering": "no", // a buffering reverse proxy would hold events back
	}
	s := &Streams{
		opts:    opts,
		srv:     srv,
		epoch:   newEpoch(),
		conns:   map[string]*conn{},
		users:   map[string]int{},
		groups:  map[string]*group{},
		topics:  map[string]map[*group]struct{}{},
		sticky:  map[stickyKey]*sse.Event{},
		lastSeq: map[string]uint64{},
		stop:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go s.tick()
	return s
}

// newEpoch names this process's stream for its cursors. Replicas behind a
// balancer share no cursors: each must have an epoch of its own, so a cursor
// from another replica (a tab whose stream moved) is never read as one of its
// own. The start time alone could repeat across replicas started at once.
func newEpoch() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatInt(time.Now().UnixNano(), 36) + hex.EncodeToString(b[:])
}

// Cursor returns the current stream position. A page rendered from the cache after
// reading it is up to date with every message up to it.
func (s *Streams) Cursor() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cursor(s.epoch, s.seq)
}

// Stats returns the counters.
func (s *Streams) Stats() Stats {
	s.mu.Lock()
	n, u := len(s.conns), len(s.users)
	s.mu.Unlock()
	return Stats{Connections: n, Users: u, Refused: s.refused.Load(), Busy: s.busy.Load(),
		Evicted: s.evicted.Load(), Published: s.published.Load(), Sent: s.sent.Load(), Flushes: s.flushes.Load()}
}

// Serve streams events to one client until it leaves, is evicted, the
// subscription ends or Streams closes. The caller has authenticated and
// authorized the request. An HTTP/1.1 stream is served on its hijacked
// connection by a goroutine of its own (hijack.go), and Serve returns once it
// has started; sub.Done runs when the stream ends, whichever way it is
// served (at once for a connection refused).
func (s *Streams) Serve(w http.ResponseWriter, r *http.Request, sub Subscription) {
	c, untie := s.admit(w, r, sub)
	if c == nil {
		if sub.Done != nil {
			sub.Done()
		}
		return
	}
	if raw := hijackStream(w, r); raw != nil {
		// The request's context ends when the handler returns: the stream's
		// ends when the client leaves (the read), or as before.
		if untie() {
			raw.readUntilGone(c.cancel)
		} else {
			c.cancel() // the client left before the hijack
		}
		raw.onError = c.cancel // as net/http cancels a request whose write failed
		s.mu.Lock()
		c.rc = http.NewResponseController(raw)
		s.mu.Unlock()
		go func() {
			defer func() { raw.finish(s.opts.WriteTimeout, c.evicted.Load()) }()
			defer func() {
				// What the middleware's Recover did while a handler ran the stream.
				if p := recover(); p != nil {
					s.opts.Log.Error("live: a stream panicked", "panic", p, "stack", string(debug.Stack()))
				}
			}()
			s.stream(c, raw)
		}()
		return
	}
	defer untie()
	s.stream(c, w)
}

// admit counts a connection in, or answers a refusal and returns nil. Its
// context is the request's values, cancelled with the request until untie
// (which reports whether the request's context was still live).
func (s *Streams) admit(w http.ResponseWriter, r *http.Request, sub Subscription) (*conn, func() bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "clusterdesk is shutting down", http.StatusServiceUnavailable)
		return nil, nil
	}
	// The user's own limit first: it is what that user can act on.
	if sub.User != "" && s.users[sub.User] >= s.opts.MaxPerUser {
		s.mu.Unlock()
		s.refused.Add(1)
		s.opts.Log.Warn("live: refused a connection over the per-user limit", "user", sub.User, "limit", s.opts.MaxPerUser)
		_ = Reply(w, sub.Refusal...)
		return nil, nil
	}
	if len(s.conns) >= s.opts.MaxStreams {
		s.mu.Unlock()
		s.busy.Add(1)
		s.opts.Log.Warn("live: refused a connection over the per-replica limit", "limit", s.opts.MaxStreams)
		_ = Reply(w, sub.Busy...)
		return nil, nil
	}
	defer s.mu.Unlock()
	if sub.User != "" {
		s.users[sub.User]++
	}
	// Held for as long as the connection lasts: not the refusals' messages.
	sub.Refusal, sub.Busy = nil, nil
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	untie := context.AfterFunc(r.Context(), cancel)
	s.nextID++
	c := &conn{id: strconv.FormatUint(s.nextID, 36), sub: sub, ctx: ctx, cancel: cancel, rc: http.NewResponseController(w)}
	s.conns[c.id] = c
	c.g = s.group(sub.Topics)
	c.g.refs++
	return c, untie
}

// stream runs the library's stream for c on w until it ends.
func (s *Streams) stream(c *conn, w http.ResponseWriter) {
	defer func() {
		if c.sub.Done != nil {
			c.sub.Done()
		}
	}()
	defer c.cancel()
	defer s.detach(c)
	defer func() {
		// The connection may serve another request (keep-alive): no deadline left behind.
		_ = c.rc.SetWriteDeadline(time.Time{})
	}()

	s.mu.Lock()
	// The library reads the stream from the query and refuses a Last-Event-ID that
	// is not a number; Streams has read the cursor already. It reads nothing else
	// of the request but its context, and keeps its URL for as long as the
	// connection lasts: it gets a request of its own holding only these, not a
	// copy of the client's headers and query.
	lr, err := http.NewRequestWithContext(c.ctx, http.MethodGet, "/?stream="+c.g.id, nil)
	if err != nil {
		s.mu.Unlock()
		http.Error(w, "clusterdesk could not open the stream", http.StatusInternalServerError)
		return
	}
	// s.mu stays held while the library registers the subscriber, until its
	// first flush attaches the connection (deadlineWriter.Flush): nothing is
	// pushed to the group in between (group.go).
	dw := &deadlineWriter{w: w, c: c, s: s, locked: true, timeout: s.opts.WriteTimeout, flushes: &s.flushes}
	s.srv.ServeHTTP(dw, lr)
	if dw.locked { // the library answered without streaming
		dw.locked = false
		s.mu.Unlock()
	}
	_ = dw.send() // what the library wrote last without a flush, if anything
}

// group returns the group of a topic set, creating it and its library stream
// if none has it (under s.mu).
func (s *Streams) group(topics []string) *group {
	topics = slices.Clone(topics)
	slices.Sort(topics)
	topics = slices.Compact(topics)
	key := groupKey(topics)
	if g := s.groups[key]; g != nil {
		return g
	}
	s.nextID++
	g := &group{id: "g" + strconv.FormatUint(s.nextID, 36), topics: topics, conns: map[*conn]struct{}{}}
	s.srv.CreateStream(g.id)
	s.groups[key] = g
	for _, t := range topics {
		m := s.topics[t]
		if m == nil {
			m = map[*group]struct{}{}
			s.topics[t] = m
		}
		m[g] = struct{}{}
	}
	return g
}

// attach joins a connection to its group once the library has registered its
// subscriber (under s.mu, held since Serve), and returns what it receives first:
// the hello, any resyncs and the sticky messages. Nil ends the connection.
func (s *Streams) attach(c *conn) []byte {
	if c.done || c.ended || c.evicted.Load() {
		return nil
	}
	now := []byte(cursor(s.epoch, s.seq))
	hello := c.sub.Hello
	if hello == "" {
		hello = "-"
	}
	var b bytes.Buffer
	formatEvent(&b, &sse.Event{ID: now, Event: []byte(HelloEvent), Data: encodeData([]byte(hello))})
	since, sameProcess := parseCursor(s.epoch, c.sub.Since)
	for _, t := range c.sub.Resync {
		if (!sameProcess || s.lastSeq[t] > since) && (c.sub.Shown == nil || !c.sub.Shown(t)) {
			formatEvent(&b, &sse.Event{ID: now, Event: []byte(ResyncEvent), Data: encodeData([]byte(t))})
		}
	}
	for _, t := range c.sub.Topics {
		for k, ev := range s.sticky {
			if k.topic != t {
				continue
			}
			// The id is the current cursor: the client is up to date with it now.
			formatEvent(&b, &sse.Event{ID: now, Event: ev.Event, Data: ev.Data})
		}
	}
	// What the group pushed before now went out before this connection's
	// cursor: its writer skips it.
	c.mark.Store(c.g.last)
	c.g.conns[c] = struct{}{}
	c.joined = true
	c.attached = true
	return b.Bytes()
}

// detach takes a connection out of every topic; no message reaches it afterwards.
func (s *Streams) detach(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.done = true
	s.leave(c)
	delete(s.conns, c.id)
	delete(c.g.conns, c)
	c.joined = false
	// ServeHTTP has returned, so the library has deregistered the subscriber:
	// the last connection of a group removes its stream with none left on it
	// (a stream removed with a subscriber leaks that subscriber's goroutine).
	if c.g.refs--; c.g.refs == 0 {
		s.srv.RemoveStream(c.g.id)
		key := groupKey(c.g.topics)
		delete(s.groups, key)
		for _, t := range c.g.topics {
			if m := s.topics[t]; m != nil {
				delete(m, c.g)
				if len(m) == 0 {
					delete(s.topics, t)
				}
			}
		}
	}
	if u := c.sub.User; u != "" {
		if s.users[u]--; s.users[u] <= 0 {
			delete(s.users, u)
		}
	}
}

// leave ends c's messages (under s.mu): its writer writes no further group
// event. It stays in its group until Serve returns, its queue still counted:
// its handler drains the subscriber channel until the library lets it go.
func (s *Streams) leave(c *conn) {
	c.left.Store(true)
	c.attached = false
}

// Behind returns how many of the connections receiving messages have yet to
// take the last event pushed to their group (their writer's mark is below
// it), of how many (the Hub holds its next batch while many are).
func (s *Streams) Behind() (behind, of int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.groups {
		for c := range g.conns {
			if !c.attached || c.left.Load() {
				continue
			}
			of++
			if c.mark.Load() < g.last {
				behind++
			}
		}
	}
	return behind, of
}

// Publish sends each message to the connections subscribed to its topic, in
// order. It never blocks on a client: a connection whose queue is full is evicted.
// Invalid messages are dropped and logged.
func (s *Streams) Publish(msgs ...Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		if err := m.valid(); err != nil {
			s.opts.Log.Error("live: dropping message", "err", err)
			continue
		}
		s.seq++
		ev := &sse.Event{ID: []byte(cursor(s.epoch, s.seq)), Event: []byte(m.Event), Data: encodeData(m.Data)}
		if m.Sticky {
			s.sticky[stickyKey{m.Topic, m.Event}] = ev
		} else {
			s.lastSeq[m.Topic] = s.seq
		}
		s.published.Add(1)
		// The same event value goes to every group: rendered and encoded once.
		for g := range s.topics[m.Topic] {
			s.push(g, ev, messageKey(s.seq))
		}
	}
}

// push hands ev to g's library stream (under s.mu), first evicting each
// connection that has Queue events waiting already (group.go). The library's
// Publish blocks only while its stream goroutine hands the events before it to
// the subscribers, none of which is full.
func (s *Streams) push(g *group, ev *sse.Event, key uint64) {
	if len(g.conns) == 0 {
		return
	}
	if behind := g.behind(s.opts.Queue); behind != 0 {
		for c := range g.conns {
			if c.mark.Load() < behind {
				s.evict(c)
			}
		}
	}
	s.srv.Publish(g.id, ev)
	g.remember(key, s.opts.Queue)
	if len(ev.Data) > 0 {
		n := 0
		for c := range g.conns {
			if c.attached {
				n++
			}
		}
		s.sent.Add(int64(n))
	}
}

// evict cuts a connection off at once (under s.mu): it leaves its topics, its
// request context ends (so the library deregisters it), and a write blocked in a
// stalled TCP connection fails now rather than at its deadline.
func (s *Streams) evict(c *conn) {
	if c.evicted.Swap(true) {
		return
	}
	s.evicted.Add(1)
	s.leave(c)
	c.cancel()
	_ = c.rc.SetWriteDeadline(time.Now())
	s.opts.Log.Info("live: evicted a connection that fell behind", "stream", c.id)
}

// tick sends heartbeats, ends subscriptions whose time is up and runs the
// periodic checks, until Close.
func (s *Streams) tick() {
	defer close(s.stopped)
	t := time.NewTicker(s.opts.Heartbeat)
	defer t.Stop()
	lastCheck := time.Now()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.heartbeat(now)
			if now.Sub(lastCheck) >= s.opts.Recheck {
				lastCheck = now
				s.recheck()
			}
		}
	}
}

func (s *Streams) heartbeat(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		if c.attached && !c.sub.Until.IsZero() && now.After(c.sub.Until) {
			s.leave(c)
			c.cancel()
		}
	}
	for _, g := range s.groups {
		s.pushHeartbeat(g)
	}
}

// pushHeartbeat sends g's connections a heartbeat comment (under s.mu); it
// also wakes their writers, which write what a connection has of its own first.
func (s *Streams) pushHeartbeat(g *group) {
	key := g.last + 1
	s.push(g, heartbeatEvent(key), key)
}

// recheck runs each connection's Check outside the lock (it may ask the API server).
func (s *Streams) recheck() {
	s.mu.Lock()
	var cs []*conn
	for _, c := range s.conns {
		if c.attached && c.sub.Check != nil {
			cs = append(cs, c)
		}
	}
	s.mu.Unlock()
	for _, c := range cs {
		ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
		ok := c.sub.Check(ctx)
		cancel()
		if !ok {
			s.mu.Lock()
			s.leave(c)
			s.mu.Unlock()
			c.cancel()
		}
	}
}

// Close ends every connection and the heartbeat; later Serve calls answer 503.
// Register it with http.Server.RegisterOnShutdown: Shutdown waits for handlers,
// and a stream's handler returns only when its connection ends.
func (s *Streams) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	for _, c := range s.conns {
		s.leave(c)
		c.cancel()
	}
	s.mu.Unlock()
	close(s.stop)
	<-s.stopped
}
