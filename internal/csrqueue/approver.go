package csrqueue

import (
	"context"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
)

// approverEvery is how long the queue trusts its last read of the
// approver's Lease: one GET per 10 s per server, whatever the views.
const approverEvery = 10 * time.Second

// approverLease reads the approver's Lease for the pending reasons.
type approverLease struct {
	name string
	read func(context.Context) (*coordinationv1.Lease, error)

	mu   sync.Mutex
	at   time.Time
	last csrwhy.Approver
}

// UseApprover makes the queue say the approver's state as its Lease (name:
// namespace/name) says it, read with read at most every 10 s.
func (q *Queue) UseApprover(name string, read func(context.Context) (*coordinationv1.Lease, error)) {
	q.approver.Store(&approverLease{name: name, read: read})
}

// Approver is the approver's state now, as the queue last read it; the zero
// state (none installed) when the queue has no Lease to read.
func (q *Queue) Approver() csrwhy.Approver {
	a := q.approver.Load()
	if a == nil {
		return csrwhy.Approver{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if now := time.Now(); a.at.IsZero() || now.Sub(a.at) > approverEvery {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		l, err := a.read(ctx)
		cancel()
		if err == nil {
			a.last = csrwhy.FromLease(a.name, l)
		} else if a.at.IsZero() {
			a.last = csrwhy.Approver{Lease: a.name}
		}
		a.at = now
	}
	return a.last
}
