package page

import (
	"context"
	"sync"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/clusterdesk/clusterdesk/internal/approvers"
	"github.com/clusterdesk/clusterdesk/internal/attention"
)

// approverWalkKept is how long one read of the ClusterRoles and
// ClusterRoleBindings answers "does anything approve this signer?" for the
// home page, like an access review's answer (internal/kube/access.go): the
// page costs the API server one pair of LISTs per this period at most,
// never one per view.
const approverWalkKept = 30 * time.Second

// ApproverWalk is the last RBAC walk, read as a user who may list the
// ClusterRoles and ClusterRoleBindings. Who may approve a signer does not
// depend on who asks, so one read serves every user who may read RBAC
// themselves (Rights.MayReadRBAC checks that, through the cached access reviews);
// the answers per signer are kept with it. Safe for concurrent use.
type ApproverWalk struct {
	mu       sync.Mutex
	at       time.Time
	roles    []rbacv1.ClusterRole
	bindings []rbacv1.ClusterRoleBinding
	gaps     map[string]gap // signer → attention.GapOf(approvers.Who(...)), as asked
	reading  bool           // a read is under way (one at a time)
}

// gap is one signer's answer.
type gap struct {
	sev attention.Severity
	ok  bool
}

// GapFunc answers from the last walk; nil before the first.
func (w *ApproverWalk) GapFunc() func(string) (attention.Severity, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at.IsZero() {
		return nil
	}
	// The walk captured now answers (each walk has its own answers map).
	roles, bindings, answers := w.roles, w.bindings, w.gaps
	return func(signer string) (attention.Severity, bool) {
		w.mu.Lock()
		defer w.mu.Unlock()
		v, ok := answers[signer]
		if !ok {
			v.sev, v.ok = attention.GapOf(approvers.Who(signer, roles, bindings))
			answers[signer] = v
		}
		return v.sev, v.ok
	}
}

// Refresh reads RBAC with read when the last walk is older than
// approverWalkKept (and no other read is under way); it keeps the last walk
// when the read fails.
func (w *ApproverWalk) Refresh(ctx context.Context, now time.Time, read func(context.Context) ([]rbacv1.ClusterRole, []rbacv1.ClusterRoleBinding, error)) error {
	w.mu.Lock()
	if w.reading || (!w.at.IsZero() && now.Sub(w.at) < approverWalkKept) {
		w.mu.Unlock()
		return nil
	}
	w.reading = true
	w.mu.Unlock()
	roles, bindings, err := read(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reading = false
	if err != nil {
		return err
	}
	w.at, w.roles, w.bindings, w.gaps = now, roles, bindings, map[string]gap{}
	return nil
}
