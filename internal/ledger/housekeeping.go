package ledger

import "strings"

// HousekeepingSQL is the one definition of the control plane's housekeeping
// (issue 44): the entries the ledger's list folds by default because a
// running cluster writes them all day (a custom resource definition's
// status, a flow schema's status, a lease) and they bury the people's
// writes. It is conservative: an entry is housekeeping only when every term
// holds, so whatever a person or a decision wrote stays in the list.
//
//   - source = 'apiserver': only the API server's audit says who wrote; a
//     write through the console is always a person's.
//   - result = 'ok': a refused or failed write is never folded, whoever
//     tried it.
//   - action IN ('status', 'update'): a create, a delete, an approval, a
//     denial or an issued certificate is never housekeeping.
//   - kind <> 'csrs': nothing of a CSR is folded, not even an update by the
//     controller manager: its csrapproving controller approves as
//     system:serviceaccount:kube-system:certificate-controller (an approval
//     an auditor wants), and its signer issues as the same identity.
//   - no impersonator: someone acting as the control plane is a person.
//   - the user is one of the control plane's own identities: the API server
//     itself (system:apiserver, its loopback client), the controller
//     manager and the scheduler under their own names, and the service
//     accounts of kube-system, which the controller manager's controllers
//     use with --use-service-account-credentials (the devcluster's
//     certificate-controller; upstream
//     cmd/kube-controller-manager/app/controllermanager.go). The prefix is
//     compared with substr, not LIKE, which SQLite folds to lower case and
//     PostgreSQL does not.
//
// The text is a literal (no parameters) so that both planners match it to the
// partial index of migration 00004, whose WHERE is NOT (HousekeepingSQL),
// copied there word for word (a test compares them).
const HousekeepingSQL = "source = 'apiserver' AND result = 'ok' AND action IN ('status', 'update')" +
	" AND kind <> 'csrs' AND impersonator = ''" +
	" AND (user_name IN ('system:apiserver', 'system:kube-controller-manager', 'system:kube-scheduler')" +
	" OR substr(user_name, 1, 34) = 'system:serviceaccount:kube-system:')"

// controlPlaneUsers and kubeSystemSAs are HousekeepingSQL's identities, for
// IsHousekeeping.
var controlPlaneUsers = []string{"system:apiserver", "system:kube-controller-manager", "system:kube-scheduler"}

const kubeSystemSAs = "system:serviceaccount:kube-system:"

// IsHousekeeping is HousekeepingSQL for one entry in Go, for the stores that
// are not SQL (the views' tests); the backends' suite checks that the two
// agree.
func IsHousekeeping(e Entry) bool {
	cp := strings.HasPrefix(e.User, kubeSystemSAs)
	for _, u := range controlPlaneUsers {
		cp = cp || e.User == u
	}
	return cp && e.Source == SourceAPIServer && e.Result == ResultOK &&
		(e.Action == ActionStatus || e.Action == ActionUpdate) && e.Kind != "csrs" && e.Impersonator == ""
}
