package csrqueue

import (
	"errors"
	"fmt"
)

// Group actions, as the preview's action parameter names them.
const (
	StormApproveNewest = "approve-newest" // approve the newest request, deny the others
	StormDenyAll       = "deny-all"
)

// ErrApproveNewestOfMany refuses "approve the newest" on a requester storm:
// its requests name different subjects, so the newest is not the one a
// retrying client waits for but one of many different certificates, and
// approving it while denying the others is never what was meant.
var ErrApproveNewestOfMany = errors.New("these requests name different subjects: approving the newest would issue one of them and deny the others. Open the group and approve the ones you mean, or deny all")

// StormPlan is what one step of a group action decides: at most one request
// to approve (the storm's newest) and the requests to deny, oldest first.
type StormPlan struct {
	Approve *Member
	Deny    []Member
	Left    int // requests of the storm this step leaves pending
}

// PlanStorm plans one step of action on the storm, deciding at most limit
// requests. A storm larger than limit is decided in steps that deny the
// oldest first and approve the newest only in the last, so that repeating
// "approve newest, deny the rest" converges and never approves two.
func PlanStorm(st *Storm, action string, limit int) (StormPlan, error) {
	n := st.Size()
	limit = max(limit, 1)
	switch action {
	case StormApproveNewest:
		if st.ByRequester {
			return StormPlan{}, ErrApproveNewestOfMany
		}
		if n <= limit {
			newest := st.Newest()
			return StormPlan{Approve: &newest, Deny: st.First(n - 1)}, nil
		}
		return StormPlan{Deny: st.First(limit), Left: n - limit}, nil
	case StormDenyAll:
		k := min(n, limit)
		return StormPlan{Deny: st.First(k), Left: n - k}, nil
	}
	return StormPlan{}, fmt.Errorf("unknown group action %q", action)
}
