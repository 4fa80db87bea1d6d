package handlers

import "github.com/clusterdesk/clusterdesk/internal/csrqueue"

// csrQueueOf is the CSR queue caches of the server New builds: Deps'
// when given, else those of its live updates, so that pages and live rows
// share one index as they share the informer cache, else its own.
// Each server has its own (csrqueue.Queue), never a process-wide one.
func csrQueueOf(deps Deps) *csrqueue.Queue {
	if deps.CSRQueue != nil {
		return deps.CSRQueue
	}
	if deps.Live != nil {
		return deps.Live.csrQueue
	}
	return csrqueue.New(deps.Cluster)
}
