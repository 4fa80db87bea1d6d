package csrqueue

import (
	"sync"
	"sync/atomic"

	certificatesv1 "k8s.io/api/certificates/v1"

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

// stormIndex hands out the storm index of the cached CSRs to pages that show
// one CSR, without listing every CSR on each view: it is rebuilt when the
// cache reported a CSR change since the last build, and read as it is
// otherwise. The queue builds the same index from the list it already has
// (Cache), and this holder shares that work.
type stormIndex struct {
	// changes counts the CSR changes the cache reported. Nil when the source
	// cannot report changes: then every call lists and groups again.
	changes *atomic.Uint64

	mu     sync.Mutex
	built  uint64 // changes when storms was built
	storms *Storms
}

// newStormIndex follows the CSR changes of src when it reports them.
func newStormIndex(src Source) *stormIndex {
	x := &stormIndex{}
	if n, ok := src.(changeNotifier); ok {
		x.changes = &atomic.Uint64{}
		// The informer updates its store before it notifies, so a build that
		// starts after this count was read lists at least what it counted.
		n.OnChange(func(id kube.KindID, _ string) {
			if id == kube.CSRs {
				x.changes.Add(1)
			}
		})
	}
	return x
}

// get returns the index, building it with build when CSRs changed since the
// last build; nil when the CSRs cannot be listed (the duplicates finding is
// then left out, as it was when the cache could not answer).
func (x *stormIndex) get(src Source, build func([]*certificatesv1.CertificateSigningRequest) *Storms) *Storms {
	x.mu.Lock()
	defer x.mu.Unlock()
	var now uint64
	if x.changes != nil {
		now = x.changes.Load()
		if x.storms != nil && now == x.built {
			return x.storms
		}
	}
	items, err := src.CSRs()
	if err != nil {
		return nil
	}
	x.storms, x.built = build(items), now
	return x.storms
}
