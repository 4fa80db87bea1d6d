// Package csrwhy says why a pending CSR is pending (issue 47, item 1): which
// one thing keeps automation from deciding it, as a bounded code (for
// metrics labels and the queue's filter) and one line for people that names
// the values it saw.
//
// It is a pure engine: the caller hands it the request, the compiled
// policies, what it knows of the request's Node, of the requester's other
// requests (Duplicates) and of the approver (its Lease, dry run, the signers
// the API server refused it), and gets one Reason. The console's queue and a
// request's page, and the approver's metrics and log, ask the same engine,
// so the words and codes are one.
package csrwhy
