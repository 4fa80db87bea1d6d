package csrqueue

import (
	"context"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
)

// Why a pending request is pending (issue 47), as internal/csrwhy says it
// from what the queue holds: the policies' verdicts, memoized per generation
// in the request's facts; its newer twin, from the storm index (O(log n): a
// storm of thousands of retries of one subject costs a lookup per row, and
// the filter one per pending request, never a scan per row); the approver
// as the console reads its Lease (Env.Approver); each requester's approvals
// in time order, kept per change (approvals.go), so that a rate limit's hold
// is a binary search per row. The queue watches no Nodes,
// so NodeMissing is said on a request's page, where the Node is read, and a
// policy reading `node` names its clause here.

// Why is the item's reason; "" code for a request that is not pending.
// detail words the message (a row shown); the filter asks for the code only.
// A storm's group row says its newest request's (the one its checks show).
func (it *Item) Why(detail bool) csrwhy.Reason {
	if it.ChecksOf != nil && it.ChecksOf != it {
		return it.ChecksOf.Why(detail)
	}
	if it.State != Pending {
		return csrwhy.Reason{}
	}
	in := csrwhy.Input{CSR: it.CSR, Approver: it.v.approver, Now: it.v.now, Detail: detail}
	in.Request, _ = it.Request()
	if pol := it.v.policies; pol != nil && pol.Gen != 0 {
		in.Policies = pol.Policies
		in.Verdicts, in.Evaluated = it.Verdicts(), true
	}
	in.Newer = it.v.storms.NewerTwin(it.CSR.Name)
	if it.v.approvals != nil {
		in.Approvals = it.v.approvals
	}
	return csrwhy.Explain(context.Background(), in)
}

// usagesKey is spec.usages sorted and joined (Member.Usages).
func usagesKey(c *certificatesv1.CertificateSigningRequest) string {
	u := make([]string, len(c.Spec.Usages))
	for i, x := range c.Spec.Usages {
		u[i] = string(x)
	}
	slices.Sort(u)
	return strings.Join(u, ",")
}

// Why is the reason of one pending request, for its page: the page knows
// what the queue does not, the request's Node (read as the user: node). A
// decided request has none (zero Reason). The policies are the queue's
// (nil: the user may not list them; then no policy is known).
func (q *Queue) Why(c *certificatesv1.CertificateSigningRequest, pol *csrpolicy.Compiled, node csrwhy.NodeState) csrwhy.Reason {
	if csrpolicy.DecisionOf(c) != "" {
		return csrwhy.Reason{}
	}
	in := csrwhy.Input{CSR: c, Approver: q.Approver(), Node: node, Now: time.Now(), Detail: true}
	in.Request, _ = q.Decode(c.Spec.Request)
	if pol != nil && pol.Gen != 0 {
		in.Policies = pol.Policies
	}
	in.Newer = q.Storms().NewerTwin(c.Name)
	if a := q.approvals(); a != nil {
		in.Approvals = a
	}
	return csrwhy.Explain(context.Background(), in)
}
