package live

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Renderer turns the changes of one kind into messages: names are the objects
// that changed (sorted, each once, possibly deleted since); status reports that
// the kind's cache status changed. It runs on the hub's goroutine, once per batch.
type Renderer func(kind kube.KindID, names []string, status bool) []Message

// Publisher is where the hub sends messages (Streams).
type Publisher interface {
	Publish(msgs ...Message)
}

// backlogged is a Publisher that knows how far its connections are behind
// (Streams: Behind).
type backlogged interface {
	Behind() (behind, of int)
}

// HubOptions tune a Hub; zero values take the defaults.
type HubOptions struct {
	Log *slog.Logger
	// Interval is the shortest time between two batches (default 25 ms). The first
	// change after a quiet spell goes out at once; changes that arrive while a
	// batch is waiting join it, so a burst of updates to one object becomes one or
	// two messages.
	Interval time.Duration
	// MaxHold is the longest a batch waits, from its first change, while more
	// than 1 in 20 of the publisher's connections have yet to take the last
	// message (default 250 ms; only with a publisher that knows, Streams).
	// A fan-out to thousands of tabs takes a machine's cores a while: a batch
	// published meanwhile would queue behind it, and the next behind that,
	// so under load each change would wait for ever more fan-outs. Held
	// instead, it joins the next message (coalesced per object, as within an
	// interval), and the fan-outs stay as many as the cores can write.
	MaxHold time.Duration
}

// Hub coalesces cache changes and publishes each batch rendered once.
type Hub struct {
	render   Renderer
	out      Publisher
	log      *slog.Logger
	interval time.Duration
	maxHold  time.Duration

	mu      sync.Mutex
	pending map[kube.KindID]*batch
	wake    chan struct{}
}

type batch struct {
	names  map[string]struct{}
	status bool
}

// NewHub returns a hub that renders with render and publishes to out. Register
// Notify with kube.Cache.OnChange and start Run.
func NewHub(render Renderer, out Publisher, opts HubOptions) *Hub {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Interval <= 0 {
		opts.Interval = 25 * time.Millisecond
	}
	if opts.MaxHold <= 0 {
		opts.MaxHold = 250 * time.Millisecond
	}
	return &Hub{
		render: render, out: out, log: opts.Log, interval: opts.Interval, maxHold: opts.MaxHold,
		pending: map[kube.KindID]*batch{},
		wake:    make(chan struct{}, 1),
	}
}

// Notify records that an object of a kind changed (name "" for the kind's status).
// It only enqueues, never blocks: the cache calls it on informer goroutines.
// Pending work is bounded by the number of objects: repeated changes to one object
// are one entry.
func (h *Hub) Notify(id kube.KindID, name string) {
	h.mu.Lock()
	b := h.pending[id]
	if b == nil {
		b = &batch{names: map[string]struct{}{}}
		h.pending[id] = b
	}
	if name == "" {
		b.status = true
	} else {
		b.names[name] = struct{}{}
	}
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// Run renders and publishes batches until ctx ends.
func (h *Hub) Run(ctx context.Context) {
	var last time.Time
	timer := time.NewTimer(0)
	<-timer.C
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		}
		woke := time.Now()
		sleep := func(d time.Duration) bool {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				timer.Stop()
				return false
			case <-timer.C:
				return true
			}
		}
		if wait := h.interval - time.Since(last); wait > 0 && !sleep(wait) {
			return
		}
		for h.backlog() && time.Since(woke) < h.maxHold {
			if !sleep(min(h.interval, h.maxHold-time.Since(woke))) {
				return
			}
		}
		last = time.Now()
		h.flush()
	}
}

// backlog reports whether more than 1 in 20 of the publisher's connections
// have yet to take its last message (HubOptions.MaxHold). A few slow or
// stalled tabs hold nothing up: they are evicted once they are far behind.
func (h *Hub) backlog() bool {
	b, ok := h.out.(backlogged)
	if !ok {
		return false
	}
	behind, of := b.Behind()
	return behind*20 > of
}

// flush takes everything pending and publishes it, kind by kind.
func (h *Hub) flush() {
	h.mu.Lock()
	pending := h.pending
	h.pending = map[kube.KindID]*batch{}
	h.mu.Unlock()
	kinds := make([]kube.KindID, 0, len(pending))
	for k := range pending {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		b := pending[k]
		names := make([]string, 0, len(b.names))
		for n := range b.names {
			names = append(names, n)
		}
		slices.Sort(names)
		msgs, err := h.renderSafely(k, names, b.status)
		if err != nil {
			h.log.Error("live: rendering failed", "kind", k, "err", err)
			continue
		}
		if len(msgs) > 0 {
			h.out.Publish(msgs...)
		}
	}
}

// renderSafely keeps a failing renderer from taking the hub (and every page's
// live updates) down with it.
func (h *Hub) renderSafely(k kube.KindID, names []string, status bool) (msgs []Message, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return h.render(k, names, status), nil
}
