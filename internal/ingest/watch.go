package ingest

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/managedfields"
)

// DefaultWatchQueue bounds the watch events waiting for their diff: a CSR
// storm's thousands of events beyond it are dropped and counted, never
// waited for (the API server's audit events still reach the ledger). Each
// queued event holds two pointers to objects the cache holds anyway.
const DefaultWatchQueue = 4096

// WatchFeed writes the versions of the console's kinds that its watch
// observes to the ledger as SourceWatch entries (issue 44: one history
// stack; this was the in-memory activity ring): the change, the diff from
// the version observed before, the field managers credited. Enqueue never
// blocks an informer: the diffs are computed by Run, and the entries are
// appended in batches by a ConsoleFeed's loop (batches of consoleBatch,
// retried while the database does not answer). What the ledger keeps is
// bounded by its retention and --ledger-max-entries; each diff by
// audit.MaxDiff; no object is stored (the diff is the record).
//
// Replicas observe the same events: each entry's ID is ledger.WatchID of
// the object's uid and version, which the store keeps once.
type WatchFeed struct {
	log     *slog.Logger
	now     func() time.Time
	queue   chan kube.ObjectChange
	entries *ConsoleFeed
	dropped atomic.Int64
}

// NewWatchFeed returns a feed of size queued events (default
// DefaultWatchQueue) to store; call Run.
func NewWatchFeed(store ledger.Store, size int, log *slog.Logger) *WatchFeed {
	if size <= 0 {
		size = DefaultWatchQueue
	}
	if log == nil {
		log = slog.Default()
	}
	entries := NewConsoleFeed(store, 0, log)
	entries.what = "the watch's observed versions"
	return &WatchFeed{log: log, now: time.Now, queue: make(chan kube.ObjectChange, size), entries: entries}
}

// Enqueue queues a watch event without blocking; a full queue drops it
// (counted in Dropped). It is a kube.Cache OnObject listener.
func (f *WatchFeed) Enqueue(ch kube.ObjectChange) {
	select {
	case f.queue <- ch:
	default:
		if f.dropped.Add(1) == 1 {
			f.log.Warn("ledger: the watch's queue is full, dropping observed versions (the API server's audit events still reach the ledger)")
		}
	}
}

// Dropped counts the events not recorded: a full queue of events, or of
// entries waiting for the database.
func (f *WatchFeed) Dropped() int64 { return f.dropped.Load() + f.entries.Dropped() }

// Stored counts the entries appended.
func (f *WatchFeed) Stored() int64 { return f.entries.Stored() }

// Run turns queued events into entries and appends them until ctx ends.
func (f *WatchFeed) Run(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.entries.Run(ctx)
	}()
	for {
		select {
		case <-ctx.Done():
			<-done
			return
		case ch := <-f.queue:
			if e, ok := WatchEntry(ch, f.now()); ok {
				f.entries.add(e)
			}
		}
	}
}

// WatchEntry maps one observed watch event to a ledger entry, or reports
// false when there is nothing to keep: a relist replaying the version it
// had, or an object without a uid (no identity to tell versions by).
func WatchEntry(ch kube.ObjectChange, observed time.Time) (ledger.Entry, bool) {
	obj := ch.New
	if obj == nil {
		obj = ch.Old
	}
	m, err := accessor(obj)
	if err != nil || m.GetUID() == "" {
		return ledger.Entry{}, false
	}
	k, ok := consoleKind(ch.Kind)
	if !ok {
		return ledger.Entry{}, false
	}
	e := ledger.Entry{
		Source: ledger.SourceWatch, Time: observed.UTC(), Kind: string(k.ID), Name: m.GetName(), UID: string(m.GetUID()),
		RV: m.GetResourceVersion(), APIGroup: k.Group, APIVersion: k.Version, Resource: k.Resource, Result: ledger.ResultOK,
	}
	if r, ok := obj.(*certificatesv1.CertificateSigningRequest); ok {
		e.Signer = r.Spec.SignerName // the per-signer views find it
	}
	var before, after []metav1.ManagedFieldsEntry
	switch {
	case ch.Old == nil:
		e.Action, after = ledger.ActionCreate, m.GetManagedFields()
	case ch.New == nil:
		e.Action = ledger.ActionDelete
	default:
		om, err := accessor(ch.Old)
		if err != nil {
			return ledger.Entry{}, false
		}
		if om.GetResourceVersion() == e.RV {
			return ledger.Entry{}, false // a relist replaying the same version: nothing changed
		}
		e.Action, before, after = ledger.ActionUpdate, om.GetManagedFields(), m.GetManagedFields()
	}
	if e.Action != ledger.ActionDelete {
		c := managedfields.Credit(managedfields.Changed(before, after))
		e.Manager, e.Subresource = c.Manager, c.Subresource
		if c.Subresource == "status" && e.Action == ledger.ActionUpdate {
			e.Action = ledger.ActionStatus
		}
	}
	oldText, err1 := audit.ObjectText(ch.Old)
	newText, err2 := audit.ObjectText(sameRequest(ch.Old, ch.New))
	if err1 == nil && err2 == nil {
		e.Diff, _ = audit.Diff(oldText, newText)
	}
	e.ID = ledger.WatchID(e.UID, e.RV, e.Action)
	return e, true
}

// consoleKind is the console's kind of an id.
func consoleKind(id kube.KindID) (kube.Kind, bool) {
	for _, k := range kube.AllKinds() {
		if k.ID == id {
			return k, true
		}
	}
	return kube.Kind{}, false
}

// errNoObject is a watch event's missing object.
var errNoObject = errors.New("no object")

// accessor reads an object's metadata; a nil object has none.
func accessor(o runtime.Object) (metav1.Object, error) {
	if o == nil {
		return nil, errNoObject
	}
	return meta.Accessor(o)
}
