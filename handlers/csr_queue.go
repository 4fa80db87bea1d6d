package handlers

import "github.com/clusterdesk/clusterdesk/internal/csrqueue"

// csrQueueOf is the CSR queue caches of the server New builds: Deps'
// when given, else those of its live updates, so that pages and live rows
// share one index as they share the informer cache, else its own.
// Each server has its own (csrqueue.Queue), never a process-wide one.
// The queue reads deps.Policies' verdicts.
func csrQueueOf(deps Deps) *csrqueue.Queue {
	q := deps.CSRQueue
	switch {
	case q != nil:
	case deps.Live != nil:
		q = deps.Live.Queue()
	default:
		q = csrqueue.New(deps.Cluster)
	}
	if deps.Policies != nil {
		q.UsePolicies(deps.Policies)
	}
	if deps.ReadApproverLease != nil {
		q.UseApprover(deps.ApproverLease, deps.ReadApproverLease)
	}
	return q
}
