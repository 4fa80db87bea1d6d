// Package approver is `clusterdesk approver`: the controller that lets CSR
// approval policies (internal/csrpolicy) decide pending requests alone.
//
// One replica at a time leads (a coordination.k8s.io Lease, leader.go); every
// replica keeps its informers warm so a new leader starts at once. The leader
// works a rate-limited queue of pending request names (controller.go): each
// request is evaluated by every policy naming its signer, and decided only
// when the policies that match agree (verdicts.go) and none naming the signer
// is broken (policies.go: a policy that cannot run stops its signers). The decision goes through
// the /approval subresource with the resourceVersion the cache holds
// (decider.go): the API server's optimistic concurrency, not this process, is
// what keeps a second leader or a person racing the approver from deciding a
// request twice.
//
// This package is, with internal/kube, a user of client-go: a controller is
// made of client-go's informers, workqueue and leader election, and wrapping
// them in internal/kube would only rename them.
package approver
