package handlers

import (
	"sync"
	"sync/atomic"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/present"
)

// csrDups keeps the pending CSRs grouped by signer and subject between page
// views, rebuilt on the first view after a CSR changed: a detail page then
// reads its duplicates from a map instead of grouping 50,000 CSRs (or a
// 5,000-request storm) on every view.
type csrDups struct {
	mu    sync.Mutex
	stale atomic.Bool // a CSR changed since ix was built
	ix    *present.CSRDuplicateIndex
	// watched: the cluster tells of changes (kube.Cache does); without that
	// every view groups again, as before.
	watched bool
}

// changeNotifier is the part of kube.Cache that tells of changes.
type changeNotifier interface {
	OnChange(fn func(id kube.KindID, name string))
}

func newCSRDups(cluster Cluster) *csrDups {
	d := &csrDups{}
	d.stale.Store(true)
	if n, ok := cluster.(changeNotifier); ok {
		d.watched = true
		n.OnChange(func(id kube.KindID, _ string) {
			if id == kube.CSRs {
				d.stale.Store(true)
			}
		})
	}
	return d
}

// of returns name's duplicates among the pending CSRs list returns.
func (d *csrDups) of(name string, list func() ([]*certificatesv1.CertificateSigningRequest, error)) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ix == nil || d.stale.Load() || !d.watched {
		// Marked fresh before listing: a change during the list marks it
		// stale again, so the next view sees it.
		d.stale.Store(false)
		all, err := list()
		if err != nil {
			// Without the other CSRs the page still shows, only without
			// the duplicate finding.
			d.stale.Store(true)
			return nil
		}
		d.ix = present.NewCSRDuplicateIndex(all, csrChecksEnv())
	}
	return d.ix.Of(name)
}
