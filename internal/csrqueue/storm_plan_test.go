package csrqueue

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// stormOf is a storm of n pending requests from "kubelet-w", storm-0 the oldest.
func stormOf(t *testing.T, now time.Time, n int) *Storm {
	t.Helper()
	ms := make([]Member, n)
	for i := range n {
		ms[i] = Member{Name: fmt.Sprintf("storm-%d", i), UID: fmt.Sprintf("uid-%d", i), Signer: clientSigner,
			Subject: "CN=kubelet-w", Requester: "kubelet-w", Created: now.Add(time.Duration(i-n) * time.Second)}
	}
	st := GroupStorms(ms).Of("storm-0")
	if st == nil {
		t.Fatal("no storm")
	}
	return st
}

func TestPlanStorm(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	st := stormOf(t, now, 5)
	names := func(p StormPlan) (approve string, deny []string) {
		if p.Approve != nil {
			approve = p.Approve.Name
		}
		for _, d := range p.Deny {
			deny = append(deny, d.Name)
		}
		return approve, deny
	}
	for _, tc := range []struct {
		action  string
		limit   int
		approve string
		deny    []string
		left    int
	}{
		{StormApproveNewest, 500, "storm-4", []string{"storm-0", "storm-1", "storm-2", "storm-3"}, 0},
		{StormApproveNewest, 5, "storm-4", []string{"storm-0", "storm-1", "storm-2", "storm-3"}, 0},
		// Larger than a step: deny the oldest, approve nothing yet.
		{StormApproveNewest, 2, "", []string{"storm-0", "storm-1"}, 3},
		{StormDenyAll, 500, "", []string{"storm-0", "storm-1", "storm-2", "storm-3", "storm-4"}, 0},
		{StormDenyAll, 3, "", []string{"storm-0", "storm-1", "storm-2"}, 2},
	} {
		p, err := PlanStorm(st, tc.action, tc.limit)
		a, d := names(p)
		if err != nil || a != tc.approve || !slices.Equal(d, tc.deny) || p.Left != tc.left {
			t.Errorf("%s/%d: approve %q deny %v left %d, want %q %v %d", tc.action, tc.limit, a, d, p.Left, tc.approve, tc.deny, tc.left)
		}
	}
	if _, err := PlanStorm(st, "approve-all", 10); err == nil {
		t.Error("an unknown action is refused")
	}
}

// TestPlanRequesterStorm: a requester storm is denied in steps like a retry
// storm, and "approve the newest" is refused: its newest is one certificate
// among many different ones.
func TestPlanRequesterStorm(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	ms := make([]Member, RequesterStormMin+2)
	for i := range ms {
		ms[i] = Member{Name: fmt.Sprintf("auto-%02d", i), UID: fmt.Sprintf("uid-%d", i), Signer: clientSigner,
			Subject: fmt.Sprintf("CN=svc-%d", i), Requester: "system:serviceaccount:certs:issuer", Created: now.Add(time.Duration(i) * time.Second)}
	}
	st := GroupStorms(ms).Of("auto-00")
	if st == nil || !st.ByRequester {
		t.Fatalf("a requester storm: %+v", st)
	}
	if _, err := PlanStorm(st, StormApproveNewest, 500); err != ErrApproveNewestOfMany {
		t.Errorf("approve newest of a requester storm: %v", err)
	}
	p, err := PlanStorm(st, StormDenyAll, 5)
	if err != nil || p.Approve != nil || len(p.Deny) != 5 || p.Deny[0].Name != "auto-00" || p.Left != len(ms)-5 {
		t.Errorf("deny all in steps, oldest first: %+v %v", p, err)
	}
}
