package csrqueue

import (
	"cmp"
	"slices"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
)

// approvals keeps, per requester (spec.username), when each of its approved
// requests was approved (csrpolicy.ApprovedAt), in order: how many approvals
// a requester had within a rate limit's period (csrwhy's RateLimited, the
// approver's rule) is then a binary search per row, never a scan of the
// requester's requests (a fleet's requester may have tens of thousands
// decided). Kept per change with the index; its own lock, because a row's
// Item.Why reads it after the view's run has let the cache go.
type approvals struct {
	mu sync.RWMutex
	by map[string][]approval
}

// approval is one approved request: its approval's time (ns) and its name,
// which orders equal times and finds the entry again on removal.
type approval struct {
	at   int64
	name string
}

func newApprovals() *approvals { return &approvals{by: map[string][]approval{}} }

func compareApprovals(a, b approval) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.name, b.name))
}

// add notes c's approval, if it is approved. Approvals come mostly in time
// order, so the insertion is mostly an append.
func (a *approvals) add(c *certificatesv1.CertificateSigningRequest) {
	a.at(c, func(list []approval, i int, found bool, x approval) []approval {
		if found {
			return list
		}
		return slices.Insert(list, i, x)
	})
}

// remove forgets c's approval (c as it was indexed).
func (a *approvals) remove(c *certificatesv1.CertificateSigningRequest) {
	a.at(c, func(list []approval, i int, found bool, _ approval) []approval {
		if !found {
			return list
		}
		return slices.Delete(list, i, i+1)
	})
}

// at finds where c's approval sits in its requester's list (nothing for a
// request not approved) and stores what change makes of the list; an empty
// list goes, so that the index holds only the requesters with approvals.
func (a *approvals) at(c *certificatesv1.CertificateSigningRequest, change func(list []approval, i int, found bool, x approval) []approval) {
	t, ok := csrpolicy.ApprovedAt(c)
	if !ok {
		return
	}
	x := approval{at: t.UnixNano(), name: c.Name}
	a.mu.Lock()
	defer a.mu.Unlock()
	list := a.by[c.Spec.Username]
	i, found := slices.BinarySearchFunc(list, x, compareApprovals)
	if list = change(list, i, found, x); len(list) == 0 {
		delete(a.by, c.Spec.Username)
	} else {
		a.by[c.Spec.Username] = list
	}
}

// Since counts username's approvals after since (csrwhy.Input.Approvals,
// as csrpolicy.RecentApprovals counts them: strictly after).
func (a *approvals) Since(username string, since time.Time) int {
	if a == nil {
		return 0
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	list := a.by[username]
	i, _ := slices.BinarySearchFunc(list, approval{at: since.UnixNano() + 1}, compareApprovals)
	return len(list) - i
}
