package attention

import (
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Kept is the facts of one kind's objects worth attention, kept per object
// change: the cache reports each changed name (OnChange), the next read
// judges those names again, and a read of an unchanged cluster judges
// nothing. Only what judge keeps is held (a CRD with drift, a webhook
// configuration with a danger lint), so reading the item is O(flagged).
// Safe for concurrent use.
type Kept[V any] struct {
	kind  kube.KindID
	judge func(name string) (v V, keep bool, err error) // err: kube.ErrNotSynced, not found…
	names func() ([]string, error)                      // every cached name, to list again
	// changed, when set, is told every change of a held value (after a
	// judge: old and new, each with whether it was or is held).
	changed func(name string, old V, had bool, cur V, has bool)

	mu      sync.Mutex
	dirty   map[string]struct{}
	stale   bool // list again: never listed, a watch lost or recovered, or too many changes
	flagged map[string]V
	// judged counts the names judged (tests: a read of an unchanged cluster
	// judges none).
	judged int
}

// dirtyKept bounds the names noted between two reads; past it the next read
// lists again (as the CSR queue's follower does).
const dirtyKept = 10_000

// changeNotifier is the part of kube.Cache that reports changes.
type changeNotifier interface {
	OnChange(fn func(id kube.KindID, name string))
}

// newKept follows src's changes of kind when src reports them; a source that
// does not is listed on every read.
func newKept[V any](src any, kind kube.KindID, names func() ([]string, error), judge func(string) (V, bool, error)) *Kept[V] {
	k := &Kept[V]{kind: kind, judge: judge, names: names, stale: true, flagged: map[string]V{}}
	if n, ok := src.(changeNotifier); ok {
		n.OnChange(k.note)
	}
	return k
}

func (k *Kept[V]) note(id kube.KindID, name string) {
	if id != k.kind {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.stale:
	case name == "", len(k.dirty) >= dirtyKept:
		k.stale, k.dirty = true, nil
	default:
		if k.dirty == nil {
			k.dirty = map[string]struct{}{}
		}
		k.dirty[name] = struct{}{}
	}
}

// Each calls fn with every held value (under the lock: fn must not call
// back), after bringing them up to the cache. An error is the cache's (not
// synced, forbidden): nothing is held then.
func (k *Kept[V]) Each(fn func(name string, v V)) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.catchUp(); err != nil {
		return err
	}
	for name, v := range k.flagged {
		fn(name, v)
	}
	return nil
}

func (k *Kept[V]) catchUp() error {
	if k.stale {
		names, err := k.names()
		if err != nil {
			return err
		}
		for name, v := range k.flagged {
			k.set(name, v, true, v, false)
		}
		for _, name := range names {
			if err := k.rejudge(name); err != nil {
				return err
			}
		}
		k.stale, k.dirty = false, nil
		return nil
	}
	dirty := k.dirty
	k.dirty = nil
	for name := range dirty {
		if err := k.rejudge(name); err != nil {
			k.stale = true
			return err
		}
	}
	return nil
}

func (k *Kept[V]) rejudge(name string) error {
	k.judged++
	old, had := k.flagged[name]
	v, keep, err := k.judge(name)
	switch {
	case apierrors.IsNotFound(err):
		keep = false
	case err != nil:
		return err
	}
	k.set(name, old, had, v, keep)
	return nil
}

func (k *Kept[V]) set(name string, old V, had bool, cur V, has bool) {
	if has {
		k.flagged[name] = cur
	} else {
		delete(k.flagged, name)
	}
	if k.changed != nil && (had || has) {
		k.changed(name, old, had, cur, has)
	}
}

// Sync brings the held values up to the cache without reading them (the
// changed callback keeps what the caller derives from them).
func (k *Kept[V]) Sync() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.catchUp()
}
