package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// EventWriter creates a Kubernetes Event with the console's own identity.
type EventWriter interface {
	WriteEvent(ctx context.Context, ev Event) error
}

// Options configures a Recorder.
type Options struct {
	Log *slog.Logger
	// Lines receives one JSON object per record and line; nil writes none.
	Lines io.Writer
	// Events creates the Kubernetes Event of each record; nil writes none.
	Events EventWriter
	// EventNamespace is the configured namespace for Events (see EventNamespace).
	EventNamespace string
	// Queue bounds the Events waiting to be written (default 1024): a slow or
	// unreachable API server must not hold up the page that made the write.
	// Its second half is kept for the Events of writes (see Record).
	Queue int
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Recorder writes each Record to the JSON line sink at once and queues its
// Event for Run to create. It is safe for concurrent use. A nil *Recorder
// records nothing.
type Recorder struct {
	log       *slog.Logger
	lines     io.Writer
	events    EventWriter
	namespace string
	now       func() time.Time

	mu        sync.Mutex // serializes lines and observers
	observers []func(Record)
	queue     chan Event
	// dropped counts the Events not queued: of writes the API server
	// accepted, and of attempts that changed nothing (refusals, dry runs).
	droppedWrites, droppedAttempts atomic.Int64
	failed                         atomic.Int64
}

// New returns a Recorder; call Run to write its Events.
func New(o Options) *Recorder {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Queue <= 0 {
		o.Queue = 1024
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Recorder{log: o.Log, lines: o.Lines, events: o.Events, namespace: o.EventNamespace, now: o.Now,
		queue: make(chan Event, o.Queue)}
}

// OnRecord registers fn to be called with every record (after scrubbing), on
// the goroutine that records it; fn must not block.
func (r *Recorder) OnRecord(fn func(Record)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observers = append(r.observers, fn)
}

// Record stamps, scrubs and writes rec: the JSON line now, the Event through
// the queue (dropped, and counted, when the queue is full).
func (r *Recorder) Record(rec Record) {
	if r == nil {
		return
	}
	if rec.ID == "" {
		rec.ID = newID()
	}
	if rec.Time.IsZero() {
		rec.Time = r.now()
	}
	rec.Time = rec.Time.UTC()
	if rec.Result == "" {
		rec.Result = ResultOK
	}
	rec.Reason, rec.Error = ScrubText(rec.Reason), ScrubText(rec.Error)

	r.mu.Lock()
	if r.lines != nil {
		line, err := json.Marshal(rec)
		if err == nil {
			_, err = r.lines.Write(append(line, '\n'))
		}
		if err != nil {
			r.log.Error("audit: cannot write the audit line", "err", err, "verb", rec.Verb, "kind", rec.Kind, "name", rec.Name)
		}
	}
	observers := r.observers
	r.mu.Unlock()
	for _, fn := range observers {
		fn(rec)
	}

	if r.events == nil {
		return
	}
	r.enqueue(rec)
}

// newID is 128 random bits in hex: unique without coordination between
// replicas that share one ledger.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// wrote reports whether rec is a write the API server made: accepted, and
// not a dry run. Its Event is the audit trail on the object itself.
func wrote(rec Record) bool { return rec.Result == ResultOK && !rec.DryRun }

// enqueue queues rec's Event. The Events of attempts that changed nothing
// (refusals, failures, dry runs) take only the first half of the queue: any
// number of them (a form full of made-up names, each refused) leaves the
// second half to the Events of real writes. A dropped Event is counted
// (DroppedWrites, DroppedAttempts) and logged; that of a write is logged
// each time at error level with what it was about, since the Event on the
// object is then missing (the JSON line has it).
func (r *Recorder) enqueue(rec Record) {
	if !wrote(rec) && len(r.queue) >= cap(r.queue)/2 {
		if r.droppedAttempts.Add(1) == 1 {
			r.log.Warn("audit: event queue half full, dropping the Kubernetes Events of refused and dry-run attempts (the JSON lines are complete)")
		}
		return
	}
	select {
	case r.queue <- EventFor(rec, r.namespace):
	default:
		if !wrote(rec) {
			r.droppedAttempts.Add(1)
			return
		}
		n := r.droppedWrites.Add(1)
		r.log.Error("audit: event queue full, the Kubernetes Event of this write is dropped (its JSON line is complete)",
			"user", rec.User, "verb", rec.Verb, "kind", rec.Kind, "name", rec.Name, "uid", rec.UID, "dropped", n)
	}
}

// drainTimeout bounds how long Run keeps writing queued Events after its
// context ends (shutdown), so that the last writes still reach the cluster.
const drainTimeout = 3 * time.Second

// Run creates the queued Events until ctx is done, then those still queued
// for up to drainTimeout. Each failure is logged (the first one at warn level,
// later ones at debug) and counted.
func (r *Recorder) Run(ctx context.Context) {
	if r == nil || r.events == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			r.drain()
			return
		case ev := <-r.queue:
			r.write(ctx, ev)
		}
	}
}

func (r *Recorder) drain() {
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	for ctx.Err() == nil {
		select {
		case ev := <-r.queue:
			r.write(ctx, ev)
		default:
			return
		}
	}
}

func (r *Recorder) write(ctx context.Context, ev Event) {
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err := r.events.WriteEvent(wctx, ev)
	cancel()
	if err != nil {
		level := slog.LevelDebug
		if r.failed.Add(1) == 1 {
			level = slog.LevelWarn
		}
		r.log.Log(ctx, level, "audit: cannot create the Kubernetes Event", "err", err,
			"namespace", ev.Namespace, "kind", ev.Regarding.Kind, "name", ev.Regarding.Name)
	}
}

// Dropped is how many Events were dropped because the queue was full.
func (r *Recorder) Dropped() int64 { return r.DroppedWrites() + r.DroppedAttempts() }

// DroppedWrites is how many Events of writes the API server made were dropped.
func (r *Recorder) DroppedWrites() int64 { return r.droppedWrites.Load() }

// DroppedAttempts is how many Events of refused, failed and dry-run attempts were dropped.
func (r *Recorder) DroppedAttempts() int64 { return r.droppedAttempts.Load() }

// Failed is how many Events could not be created.
func (r *Recorder) Failed() int64 { return r.failed.Load() }
