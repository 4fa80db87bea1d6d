package csrqueue

import (
	"context"
	"sync"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
)

// Policy verdicts in the queue (shadow mode, issue 28): each pending row
// shows what every policy naming its signer would do with it, and the queue
// filters by a policy's verdict. A verdict depends on the object (its UID
// and resourceVersion) and the policies' generation only, so it is kept in
// the object's facts with the generation it is of: a CSR change makes new
// facts, a policy change a new generation, and either evaluates again on
// the next view that reads the row; the memo is one small slice per pending
// object the index holds, dropped with the object.
//
// The queue does not watch Nodes (see Queue.Checks), so a kubelet request's
// `node` is null to the policies here: a policy that needs it says on the
// request's page, where the Node is read as the user, what it would do.

// Verdict values of the filter (Query.Verdict).
const (
	VerdictApprove = "approve"
	VerdictDeny    = "deny"
	VerdictError   = "error"
)

// policyVerdicts is the memo of one object's verdicts.
type policyVerdicts struct {
	mu   sync.Mutex
	gen  uint64
	done bool
	list []csrpolicy.Verdict
}

// verdicts evaluates the policies on a pending request once per generation.
func (f *facts) verdicts(c *certificatesv1.CertificateSigningRequest, checks Checks, pol *csrpolicy.Compiled) []csrpolicy.Verdict {
	if pol == nil || pol.Gen == 0 || f.pending == nil {
		return nil
	}
	m := &f.pending.policy
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done && m.gen == pol.Gen {
		return m.list
	}
	f.decoded(c, checks)
	m.list = pol.Evaluate(context.Background(), csrpolicy.Input{CSR: c, Request: f.pending.req})
	m.gen, m.done = pol.Gen, true
	return m.list
}

// Verdicts are the verdicts of the policies that match the request or could
// not run on it, in policy name order; nil for a decided request or without
// policies. A storm's group row shows those of the request whose checks it
// shows (its newest): the row's actions decide the newest, and every member
// of a storm asks for the same subject from the same requester, so a policy
// reading those says the same of each; the group's filtered view
// (group=) lists each member with its own.
func (it *Item) Verdicts() []csrpolicy.Verdict {
	if it.ChecksOf != nil && it.ChecksOf != it {
		return it.ChecksOf.Verdicts()
	}
	return it.f.verdicts(it.CSR, it.v.checks, it.v.policies)
}

// policyMatches reports whether the item has the verdict the filter asks of
// the policy ("" policy: any policy; "" verdict: approve or deny).
func (it *Item) policyMatches(policy, verdict string) bool {
	for _, v := range it.f.verdicts(it.CSR, it.v.checks, it.v.policies) {
		if policy != "" && v.Policy != policy {
			continue
		}
		if VerdictKey(v) == verdict || (verdict == "" && v.Err == nil) {
			return true
		}
	}
	return false
}

// VerdictKey is the filter's word for a verdict (approve, deny, error).
func VerdictKey(v csrpolicy.Verdict) string {
	switch {
	case v.Err != nil:
		return VerdictError
	case v.Decision == csrpolicy.Deny:
		return VerdictDeny
	}
	return VerdictApprove
}

// Matching returns the pending requests to which policy gives verdict
// (Item.policyMatches), one by one (a storm's members each), in queue order:
// at most limit of those may(signer) allows, and how many it allows in all.
// The confirm page of "approve everything policy X approves" lists them.
func (q *Queue) Matching(policy, verdict string, pol *csrpolicy.Compiled, may func(signer string) bool, limit int) ([]*certificatesv1.CertificateSigningRequest, int, error) {
	var out []*certificatesv1.CertificateSigningRequest
	n := 0
	checks := q.Checks()
	q.warmVerdicts(Query{Policy: policy, Verdict: verdict}, checks, pol)
	err := q.with(checks, func(c *Cache) {
		v := &view{checks: checks, policies: pol}
		cur := c.index().order(SortQueue)[slotOf(Pending)].cursor(false)
		for e := cur.next(); e != nil; e = cur.next() {
			if e.f.bad || may == nil || !may(e.obj.Spec.SignerName) || !v.entryItem(e).policyMatches(policy, verdict) {
				continue
			}
			if n++; len(out) < limit {
				out = append(out, e.obj)
			}
		}
	})
	return out, n, err
}
