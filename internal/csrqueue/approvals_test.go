package csrqueue

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/csrwhy"
	"github.com/clusterdesk/clusterdesk/internal/testfixtures"
)

// ratePolicies: one Approve policy for every client request, at most max
// approvals per requester per hour.
func ratePolicies(gen uint64, maxApprovals int) *csrpolicy.Compiled {
	p := policyObject("hourly", clientSigner, "true", "Approve")
	_ = unstructured.SetNestedMap(p.Object, map[string]any{"maxApprovals": int64(maxApprovals), "period": "1h"}, "spec", "rateLimit")
	return csrpolicy.CompileAll(gen, []*unstructured.Unstructured{p})
}

// TestTheQueueSaysWhenARateLimitHoldsARequest: the pending request of a
// requester with as many approvals within the hour as the policy allows is
// "held by the rate limit", on its row, in the why= filter and on its page;
// one approval fewer (a limit of one more, or an approval that left the
// window, or an approved request deleted) and it is not.
func TestTheQueueSaysWhenARateLimitHoldsARequest(t *testing.T) {
	// Now, not a fixed time: a request's page reads the clock.
	now := time.Now().UTC().Truncate(time.Second)
	mk := func(name, user string, approvedAgo time.Duration) *certificatesv1.CertificateSigningRequest {
		c := &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1",
				CreationTimestamp: metav1.NewTime(now.Add(-2 * time.Hour))},
			Spec: certificatesv1.CertificateSigningRequestSpec{Request: testfixtures.SubjectPEM(t, name, "team"),
				SignerName: clientSigner, Username: user},
		}
		if approvedAgo > 0 {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved,
				Status: corev1.ConditionTrue, LastUpdateTime: metav1.NewTime(now.Add(-approvedAgo))}}
		}
		return c
	}
	items := []*certificatesv1.CertificateSigningRequest{
		mk("a-1", "alice", 10*time.Minute), mk("a-2", "alice", 50*time.Minute), mk("a-old", "alice", 3*time.Hour),
		mk("a-pending", "alice", 0),
		mk("b-1", "bob", 5*time.Minute), mk("b-pending", "bob", 0),
	}
	env := func(maxApprovals int) Env {
		e := policyEnv(ratePolicies(uint64(maxApprovals), maxApprovals))
		e.Now = now
		e.Approver = csrwhy.Approver{Installed: true, Lease: "ns/approver", Holder: "approver-0", RenewTime: now, LeaseDuration: time.Minute}
		return e
	}
	q := New(&source{items: items})
	holder, secs := "approver-0", int32(600)
	q.UseApprover("ns/approver", func(context.Context) (*coordinationv1.Lease, error) {
		renew := metav1.NewMicroTime(time.Now())
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &renew, LeaseDurationSeconds: &secs}}, nil
	})
	why := func(maxApprovals int) map[string]csrwhy.Reason {
		res, err := q.Run(Query{State: Pending, Sort: SortAge}, env(maxApprovals))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]csrwhy.Reason{}
		for _, it := range res.Items {
			out[it.CSR.Name] = it.Why(true)
		}
		return out
	}
	got := why(2)
	if r := got["a-pending"]; r.Code != csrwhy.RateLimited || !strings.HasSuffix(r.Message, "2 of 2 approvals for alice within 1h") {
		t.Errorf("alice's pending request, two approvals within the hour of two allowed: %+v", r)
	}
	if r := got["b-pending"]; r.Code != csrwhy.Deciding {
		t.Errorf("bob's pending request, one approval of two: %+v", r)
	}
	filtered, err := q.Run(Query{State: Pending, Why: string(csrwhy.RateLimited)}, env(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(filtered.Items) != 1 || filtered.Items[0].CSR.Name != "a-pending" {
		t.Errorf("why=RateLimited kept %d rows, want a-pending alone", len(filtered.Items))
	}
	if r := q.Why(items[3], ratePolicies(2, 2), csrwhy.NodeState{}); r.Code != csrwhy.RateLimited {
		t.Errorf("the request's page: %+v", r)
	}
	if r := why(3)["a-pending"]; r.Code != csrwhy.Deciding {
		t.Errorf("a limit of three: %+v", r)
	}
	// a-1 is deleted: one approval left within the hour.
	items = append(items[:0:0], items[1:]...)
	q2 := New(&source{items: items})
	res, err := q2.Run(Query{State: Pending, Why: string(csrwhy.RateLimited)}, env(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 0 {
		t.Errorf("after a-1's deletion %d requests are still held", len(res.Items))
	}
}

// The approvals index follows changes: an approval added, one replaced by
// a later one, one removed; Since counts strictly after its time, as
// csrpolicy.RecentApprovals does.
func TestApprovalsFollowChanges(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	approved := func(name string, at time.Time) *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certificatesv1.CertificateSigningRequestSpec{Username: "u"},
			Status: certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{
				{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, LastUpdateTime: metav1.NewTime(at)}}}}
	}
	a := newApprovals()
	for i := range 5000 { // a requester's thousands, added out of order
		a.add(approved(fmt.Sprintf("r-%d", i), t0.Add(time.Duration((i*7919)%5000)*time.Second)))
	}
	if n := a.Since("u", t0.Add(4999*time.Second-time.Second)); n != 1 {
		t.Errorf("after the next-to-last second: %d, want 1", n)
	}
	if n := a.Since("u", t0.Add(-time.Second)); n != 5000 {
		t.Errorf("all: %d", n)
	}
	a.remove(approved("r-0", t0))
	a.remove(approved("r-0", t0)) // twice: nothing more goes
	if n := a.Since("u", t0.Add(-time.Second)); n != 4999 {
		t.Errorf("after a removal: %d", n)
	}
	if n := a.Since("nobody", t0); n != 0 {
		t.Errorf("a requester without approvals: %d", n)
	}
	var none *approvals
	if none.Since("u", t0) != 0 {
		t.Error("a nil index counts something")
	}
}
