package csrqueue

import (
	"sync"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
)

// After a policy change, the first view filtered by a policy or verdict
// evaluates the new generation on every pending request (0.65 s at 10,000
// pending with three policies). Under the index's lock that would hold
// every other view of the queue, and the live updates, for as long. So such
// a view first evaluates the requests outside the lock (warmVerdicts): the
// lock is held to copy the pending requests' facts, not to evaluate them;
// each object's memo has its own mutex (facts.verdicts), so a view that
// reads a row meanwhile evaluates that row alone, or waits for that row
// alone. Views of a page of rows (no such filter) evaluate only their rows,
// under the lock as before: tens of rows, not the queue.

// verdictWarmer remembers the generation the pending requests were last
// evaluated for, so only the first filtered view of a generation walks them.
type verdictWarmer struct {
	mu  sync.Mutex // one walk at a time: a second filtered view waits for it here, not at the index
	gen uint64
}

// pendingFacts is one pending request and its facts, copied under the lock.
type pendingFacts struct {
	obj *certificatesv1.CertificateSigningRequest
	f   *facts
}

// warmVerdicts evaluates pol on every pending request outside the index's
// lock, once per generation, when query filters by a policy or verdict.
func (q *Queue) warmVerdicts(query Query, checks Checks, pol *csrpolicy.Compiled) {
	if pol == nil || pol.Gen == 0 || (query.Policy == "" && query.Verdict == "" && query.Why == "") {
		return
	}
	w := &q.warm
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gen == pol.Gen {
		return
	}
	var pending []pendingFacts
	err := q.with(checks, func(c *Cache) {
		cur := c.index().order(SortQueue)[slotOf(Pending)].cursor(false)
		for e := cur.next(); e != nil; e = cur.next() {
			pending = append(pending, pendingFacts{obj: e.obj, f: &e.f})
		}
	})
	if err != nil {
		return // the view says why
	}
	for _, p := range pending {
		p.f.verdicts(p.obj, checks, pol)
	}
	w.gen = pol.Gen
}
