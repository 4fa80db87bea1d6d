package handlers

import (
	"sync"
	"sync/atomic"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// csrStormIndex hands out the storm index of the cached CSRs (csr.Storms)
// to pages that show one CSR, without listing every CSR on each view: it is
// rebuilt when the cache reported a CSR change since the last build, and
// read as it is otherwise. The queue builds the same index from the list it
// already has (csrQueueFacts), and this holder shares that work.
type csrStormIndex struct {
	// changes counts the CSR changes the cache reported. Nil when the cluster
	// cannot report changes: then every call lists and groups again.
	changes *atomic.Uint64

	mu     sync.Mutex
	built  uint64 // changes when storms was built
	storms *csr.Storms
}

// changeNotifier is the part of kube.Cache that reports changes.
type changeNotifier interface {
	OnChange(fn func(id kube.KindID, name string))
}

// newCSRStormIndex follows the CSR changes of cluster when it reports them.
func newCSRStormIndex(cluster Cluster) *csrStormIndex {
	x := &csrStormIndex{}
	if n, ok := cluster.(changeNotifier); ok {
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

// get returns the index, building it from list when CSRs changed since the
// last build; nil when the CSRs cannot be listed (the duplicates finding is
// then left out, as it was when the cache could not answer).
func (x *csrStormIndex) get(cluster Cluster) *csr.Storms {
	x.mu.Lock()
	defer x.mu.Unlock()
	var now uint64
	if x.changes != nil {
		now = x.changes.Load()
		if x.storms != nil && now == x.built {
			return x.storms
		}
	}
	items, err := cluster.CSRs()
	if err != nil {
		return nil
	}
	x.storms, x.built = csrQueueFacts.Storms(items, csrChecksEnv()), now
	return x.storms
}
