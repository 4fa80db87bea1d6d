package traffic

import (
	"strings"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// Long-running requests as kube-apiserver tells them: its LongRunningFunc is
// filters.BasicLongRunningRequestCheck(sets.NewString("watch", "proxy"),
// sets.NewString("attach", "exec", "proxy", "log", "portforward"))
// (k8s.io/kubernetes pkg/controlplane/apiserver/config.go), whose body is
// k8s.io/apiserver/pkg/server/filters/longrunning.go: those verbs, those
// subresources of a resource request, and /debug/pprof/ paths.
var (
	longRunningVerbs        = map[string]bool{"watch": true, "proxy": true}
	longRunningSubresources = map[string]bool{"attach": true, "exec": true, "proxy": true, "log": true, "portforward": true}
)

// classOf is how APF treats a request
// (k8s.io/apiserver/pkg/server/filters/priority-and-fairness.go): a watch is
// dispatched for its initialisation only (ledger.ClassWatch), any other
// long-running request bypasses APF (ledger.ClassLongRunning), the rest
// hold their seats until they end (ledger.ClassOrdinary).
func classOf(verb, subresource, nonResourceURL string, resourceRequest bool) string {
	switch {
	case verb == "watch":
		return ledger.ClassWatch
	case longRunningVerbs[verb],
		resourceRequest && longRunningSubresources[subresource],
		!resourceRequest && strings.HasPrefix(nonResourceURL, "/debug/pprof/"):
		return ledger.ClassLongRunning
	}
	return ledger.ClassOrdinary
}
