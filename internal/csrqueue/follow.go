package csrqueue

import (
	"sync"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// Source lists the cached CSRs (kube.Cache).
type Source interface {
	CSRs() ([]*certificatesv1.CertificateSigningRequest, error)
}

// changeNotifier is the part of kube.Cache that reports changes.
type changeNotifier interface {
	OnChange(fn func(id kube.KindID, name string))
}

// csrGetter is the part of kube.Cache that reads one CSR.
type csrGetter interface {
	CSR(name string) (*certificatesv1.CertificateSigningRequest, error)
}

// follower keeps a Queue's index in step with its source. A source that
// reports changes (kube.Cache) is listed once; after that each reported name
// is read again, O(log n) per order kept, at the next view, and a view of an
// unchanged cluster reads nothing. A source that cannot report changes is
// listed and compared on every view.
//
// Changes are noted on the informer's goroutine (a map insert, never the
// index's lock, so a long view does not hold up the informer) and applied by
// the next view: reading a name again is idempotent, and the informer updates
// its store before it notifies, so a name noted during a catch-up is read
// again by the next one and the index ends where the store is.
type follower struct {
	reports bool
	get     csrGetter // nil: a reported change lists again

	mu    sync.Mutex
	dirty map[string]struct{} // names changed since the last catch-up
	stale bool                // list again: never listed, or the kind's status changed
}

// dirtyKept is how many changed names a follower notes between two views;
// past it, the next view lists instead (and the first view lists the whole
// initial sync's names, never noted).
const dirtyKept = 10_000

func newFollower(src Source) *follower {
	f := &follower{stale: true}
	n, ok := src.(changeNotifier)
	if !ok {
		return f
	}
	f.reports = true
	f.get, _ = src.(csrGetter)
	n.OnChange(func(id kube.KindID, name string) {
		if id != kube.CSRs {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		switch {
		case f.stale: // the next view lists everything anyway
		case name == "", len(f.dirty) >= dirtyKept:
			// A watch lost or recovered (the informer may have listed
			// again), or more changes than a list costs to read: list again,
			// and keep no names meanwhile, however long no view comes.
			f.stale, f.dirty = true, nil
		default:
			if f.dirty == nil {
				f.dirty = map[string]struct{}{}
			}
			f.dirty[name] = struct{}{}
		}
	})
	return f
}

// catchUp brings x to the source's CSRs (the index's cache lock held).
func (f *follower) catchUp(src Source, x *index, checks Checks) error {
	if !f.reports {
		return f.relist(src, x, checks)
	}
	f.mu.Lock()
	stale, dirty := f.stale, f.dirty
	f.stale, f.dirty = false, nil
	f.mu.Unlock()
	if stale || (len(dirty) > 0 && f.get == nil) {
		return f.relist(src, x, checks)
	}
	for name := range dirty {
		c, err := f.get.CSR(name)
		switch {
		case err == nil:
			x.put(c, checks)
		case apierrors.IsNotFound(err):
			x.forget(name)
		default: // the store cannot answer: list it whole, or report why not
			return f.relist(src, x, checks)
		}
	}
	return nil
}

func (f *follower) relist(src Source, x *index, checks Checks) error {
	items, err := src.CSRs()
	if err != nil {
		if f.reports {
			f.mu.Lock()
			f.stale = true
			f.mu.Unlock()
		}
		return err
	}
	x.sync(items, checks)
	return nil
}
