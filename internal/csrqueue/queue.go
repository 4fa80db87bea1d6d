package csrqueue

import (
	"cmp"
	"sync/atomic"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
)

// DecodesKept is how many decoded requests a Queue remembers: above the
// 50,000 CSRs the page benchmark holds (a full memo starts again empty, so a
// cluster just over the size would decode every view).
const DecodesKept = 200_000

// DecidedDecodesKept is how many decoded decided requests a Queue remembers:
// the rows of a few pages and the detail pages open, no more (a decided
// request's search text and findings are kept as text, not its decoding).
const DecidedDecodesKept = 1024

// Queue is one server's CSR queue, built by its constructor and owned by
// what serves the queue (two servers in one process share nothing): the
// index of the source's CSRs kept per change (Cache, follow.go), decoded
// requests (spec.request is immutable and decoding is a pure function of it,
// so every page of the server may share them, and a queue of thousands of
// CSRs spares one signature verification per row per view), and the storm
// index for pages of one CSR.
type Queue struct {
	src     Source
	decodes *csr.Memo
	decided *csr.Memo // decided requests' decodings (Checks.Transient)
	facts   *Cache
	follow  *follower
	// policies are the CSR approval policies, compiled once per change of
	// them and shared with the pages that read them (nil: none).
	policies atomic.Pointer[csrpolicy.Set]
	// approver is the approver's Lease the pending reasons read (approver.go).
	approver atomic.Pointer[approverLease]
	// warm is the generation of the policies every pending request was
	// evaluated for outside the index's lock (verdicts_warm.go).
	warm verdictWarmer
}

// New returns the queue over src's CSRs; when src reports changes
// (kube.Cache), the index follows them instead of listing every view.
func New(src Source) *Queue {
	return &Queue{src: src, decodes: csr.NewMemo(DecodesKept), decided: csr.NewMemo(DecidedDecodesKept),
		facts: &Cache{}, follow: newFollower(src)}
}

// Decode decodes spec.request through the memo.
func (q *Queue) Decode(b []byte) (*csr.Request, error) { return q.decodes.Decode(b) }

// ForgetDecodes empties the memo (benchmarks of a cold queue).
func (q *Queue) ForgetDecodes() {
	q.decodes, q.decided = csr.NewMemo(DecodesKept), csr.NewMemo(DecidedDecodesKept)
}

// Checks is what the checks get from outside a CSR. clusterdesk does not
// watch Nodes (one more informer over the largest objects of a big cluster),
// so the kubelet-serving check says the Node is unknown.
func (q *Queue) Checks() Checks { return Checks{Decode: q.decodes.Decode, Transient: q.decided.Decode} }

// UsePolicies makes the queue's views read the verdicts of set's policies.
func (q *Queue) UsePolicies(set *csrpolicy.Set) { q.policies.Store(set) }

// Policies returns the policies compiled now; nil when the queue has none,
// or Compiled.Err when they are not served (their CRD is not installed).
func (q *Queue) Policies() *csrpolicy.Compiled {
	if s := q.policies.Load(); s != nil {
		return s.Current()
	}
	return nil
}

// Facts is the per-object cache every view of the queue shares.
func (q *Queue) Facts() *Cache { return q.facts }

// with runs fn on the index once it holds the source's CSRs; the source's
// error (not synced, forbidden) when it must be listed and cannot be.
func (q *Queue) with(checks Checks, fn func(c *Cache)) error {
	c := q.facts
	c.mu.Lock()
	defer c.mu.Unlock()
	x := c.index()
	var err error
	x.storms.change(func() { err = q.follow.catchUp(q.src, x, checks) })
	if err != nil {
		return err
	}
	fn(c)
	return nil
}

// Run lays out one view of the source's CSRs (see the package's Run) with
// the queue's own cache and checks (wire).
func (q *Queue) Run(query Query, env Env) (Result, error) {
	env = q.wire(env)
	q.warmVerdicts(query, env.Checks, env.Policies)
	var res Result
	err := q.with(env.Checks, func(c *Cache) { res = c.run(query, env) })
	return res, err
}

// Live works out what changed for the named CSRs (see the package's Live)
// with the queue's own cache and checks (wire).
func (q *Queue) Live(names []string, env Env) (Change, error) {
	env = q.wire(env)
	var ch Change
	err := q.with(env.Checks, func(c *Cache) { ch = c.live(names, env) })
	return ch, err
}

// wire completes a view's env with what the queue owns: its cache (always:
// one cache serves one queue), its memos' decoders unless env brings its
// own (a test's counting decoder), and the default page size.
func (q *Queue) wire(env Env) Env {
	env.Cache = q.facts
	if env.Checks.Decode == nil && env.Checks.Transient == nil {
		own := q.Checks()
		env.Checks.Decode, env.Checks.Transient = own.Decode, own.Transient
	}
	env.PageSize = cmp.Or(env.PageSize, PageSize)
	if env.Approver.Lease == "" {
		env.Approver = q.Approver()
	}
	return env
}

// Storms returns the storm index of the source's CSRs, kept per CSR change
// (the same index every call: read it, do not hold on to it for a
// snapshot); nil when the CSRs cannot be listed.
func (q *Queue) Storms() *Storms {
	var s *Storms
	if err := q.with(q.Checks(), func(c *Cache) { s = c.stormsNow() }); err != nil {
		return nil
	}
	return s
}

// approvals returns the index's requesters' approvals (nil when the CSRs
// cannot be listed), for a request's page's rate-limit hold.
func (q *Queue) approvals() *approvals {
	var a *approvals
	if err := q.with(q.Checks(), func(c *Cache) { a = c.index().approvals }); err != nil {
		return nil
	}
	return a
}
