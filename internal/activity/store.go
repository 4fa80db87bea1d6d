package activity

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/internal/audit"
)

// Defaults of a Store.
const (
	DefaultCapacity  = 5000     // watch entries kept
	DefaultDiffBytes = 32 << 20 // bytes of diffs kept across them
	defaultQueue     = 4096     // changes waiting for Run
	maxAttributions  = 1024     // clusterdesk writes waiting for their watch event
)

// Change is one watch event of a cached object. Old is nil for an add, New is
// nil for a delete.
type Change struct {
	Kind     string // the console's kind id
	Old, New runtime.Object
	Time     time.Time // when observed; zero for now
}

// Options configures a Store.
type Options struct {
	Capacity  int // entries kept (DefaultCapacity)
	DiffBytes int // bytes of diff text kept (DefaultDiffBytes)
	Queue     int // changes waiting to be processed (defaultQueue)
	Log       *slog.Logger
	Now       func() time.Time
}

// Store keeps the watch entries in a ring of fixed capacity, newest last, and
// their diffs within a byte budget (the oldest diffs go first). Enqueue never
// blocks an informer: the diffs are computed by Run. It is safe for concurrent use.
type Store struct {
	log     *slog.Logger
	now     func() time.Time
	started time.Time
	queue   chan Change
	dropped atomic.Int64

	mu        sync.RWMutex
	ring      []Entry // circular; len(ring) == capacity once full
	next      int     // where the next entry goes once full
	seq       uint64
	diffBytes int
	maxBytes  int
	pending   map[attrKey]string // clusterdesk writes not yet observed: user by object version
	order     []attrKey          // pending's keys, oldest first
}

type attrKey struct{ kind, name, rv string }

// NewStore returns an empty Store; call Run to process enqueued changes.
func NewStore(o Options) *Store {
	if o.Capacity <= 0 {
		o.Capacity = DefaultCapacity
	}
	if o.DiffBytes <= 0 {
		o.DiffBytes = DefaultDiffBytes
	}
	if o.Queue <= 0 {
		o.Queue = defaultQueue
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Store{log: o.Log, now: o.Now, started: o.Now().UTC(), queue: make(chan Change, o.Queue),
		ring: make([]Entry, 0, o.Capacity), maxBytes: o.DiffBytes, pending: map[attrKey]string{}}
}

// Started is when the Store began observing: nothing before it is in the ring.
func (s *Store) Started() time.Time { return s.started }

// Dropped is how many changes were not recorded because the queue was full.
func (s *Store) Dropped() int64 { return s.dropped.Load() }

// Capacity is how many watch entries the ring keeps.
func (s *Store) Capacity() int { return cap(s.ring) }

// Enqueue queues a change for Run without blocking; a full queue drops it
// (counted in Dropped). Call it from informer event handlers.
func (s *Store) Enqueue(c Change) {
	if c.Time.IsZero() {
		c.Time = s.now()
	}
	select {
	case s.queue <- c:
	default:
		if s.dropped.Add(1) == 1 {
			s.log.Warn("activity: queue full, dropping observed changes")
		}
	}
}

// Run processes enqueued changes until ctx is done.
func (s *Store) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-s.queue:
			s.Add(c)
		}
	}
}

// Add records a change now: its entry, with the managers credited from
// managedFields and the diff between the two observed versions.
func (s *Store) Add(c Change) {
	obj := c.New
	if obj == nil {
		obj = c.Old
	}
	if obj == nil {
		return
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if c.Time.IsZero() {
		c.Time = s.now()
	}
	e := Entry{Time: c.Time.UTC(), Kind: c.Kind, Name: m.GetName(), Source: SourceWatch, RV: m.GetResourceVersion()}
	var before, after []metav1.ManagedFieldsEntry
	switch {
	case c.Old == nil:
		e.Op, after = OpCreated, m.GetManagedFields()
	case c.New == nil:
		e.Op = OpDeleted
	default:
		e.Op = OpUpdated
		if om, err := meta.Accessor(c.Old); err == nil {
			e.PrevRV, before = om.GetResourceVersion(), om.GetManagedFields()
		}
		after = m.GetManagedFields()
		if e.PrevRV == e.RV {
			return // a relist replaying the same version: nothing changed
		}
	}
	if e.Op != OpDeleted {
		credit(&e, Changed(before, after))
	}
	oldText, err1 := audit.ObjectText(c.Old)
	newText, err2 := audit.ObjectText(c.New)
	if err1 == nil && err2 == nil {
		e.Diff, e.DiffTruncated = audit.Diff(oldText, newText)
	}
	s.push(e)
}

func (s *Store) push(e Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := attrKey{e.Kind, e.Name, e.RV}
	if e.Op == OpDeleted {
		key.rv = ""
	}
	if user, ok := s.pending[key]; ok {
		e.User = user
		delete(s.pending, key)
	}
	s.seq++
	e.Seq = s.seq
	if len(s.ring) < cap(s.ring) {
		s.ring = append(s.ring, e)
	} else {
		s.diffBytes -= len(s.ring[s.next].Diff)
		s.ring[s.next] = e
		s.next = (s.next + 1) % cap(s.ring)
	}
	s.diffBytes += len(e.Diff)
	// Over budget: drop the oldest diffs, keeping their rows.
	for i := 0; s.diffBytes > s.maxBytes && i < len(s.ring); i++ {
		old := &s.ring[(s.next+i)%len(s.ring)]
		if old.Diff != "" {
			s.diffBytes -= len(old.Diff)
			old.Diff, old.DiffDropped = "", true
		}
	}
}

// Attribute names the clusterdesk user of a write that produced version rv of
// an object (rv "" for a deletion), so that its watch entry shows the user,
// whichever arrives first.
func (s *Store) Attribute(kind, name, rv, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := attrKey{kind, name, rv}
	// The watch event may have been recorded already: credit it.
	for i := len(s.ring) - 1; i >= 0 && i >= len(s.ring)-64; i-- {
		e := &s.ring[(s.next+i)%len(s.ring)]
		if e.Kind == kind && e.Name == name && ((rv != "" && e.RV == rv) || (rv == "" && e.Op == OpDeleted)) {
			if e.User == "" {
				e.User = user
			}
			return
		}
	}
	if _, ok := s.pending[key]; !ok {
		s.order = append(s.order, key)
	}
	s.pending[key] = user
	for len(s.order) > maxAttributions {
		delete(s.pending, s.order[0])
		s.order = s.order[1:]
	}
}

// Entries returns the ring's entries, newest first.
func (s *Store) Entries() []Entry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Entry, 0, len(s.ring))
	for i := len(s.ring) - 1; i >= 0; i-- {
		out = append(out, s.ring[(s.next+i)%len(s.ring)])
	}
	return out
}

// History returns the ring's entries of one object, newest first.
func (s *Store) History(kind, name string) []Entry {
	var out []Entry
	for _, e := range s.Entries() {
		if e.Kind == kind && e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// Attributor returns an audit observer that credits each successful write
// made through clusterdesk (not dry runs) to its user on the matching watch
// entry. kindID maps the record's API group and resource to the console's
// kind id (kube.KindByResource); a record's kind name is no identity (a
// custom resource's kind may be named CertificateSigningRequest, and its
// deletion must not be credited with a real CSR's).
func (s *Store) Attributor(kindID func(group, resource string) (string, bool)) func(audit.Record) {
	return func(r audit.Record) {
		if r.DryRun || r.Result != audit.ResultOK || r.User == "" {
			return
		}
		id, ok := kindID(r.APIGroup, r.Resource)
		if !ok {
			return
		}
		rv := r.RVAfter
		if r.Verb == "delete" {
			rv = ""
		} else if rv == "" {
			return
		}
		s.Attribute(id, r.Name, rv, r.User)
	}
}
