//go:build integration

package approver

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestApproverLeaderKilledMidRun runs two approver replicas on one Lease
// while requests keep coming, and kills the leader mid-run (its context
// cancelled without releasing the Lease, as a crashed process leaves it). The
// other replica takes over once the Lease expires; at the end every request a
// policy decides is decided, each exactly once: one Approved or Denied
// condition, and one accepted write in the two replicas' audit lines.
func TestApproverLeaderKilledMidRun(t *testing.T) {
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ctx := context.Background()
	began := time.Now()
	s := stamp()
	label := "leader-" + s
	ns := "approver-b-" + s
	policy(t, label, "approve-ok-"+s, certificatesv1.KubeAPIServerClientSignerName, "Approve",
		`request.subject.commonName.startsWith('ok-`+s+`-')`)
	policy(t, label, "deny-no-"+s, certificatesv1.KubeAPIServerClientSignerName, "Deny",
		`request.subject.commonName.startsWith('no-`+s+`-')`)
	cfg := Config{Rest: approverConfig(t, ns), PolicySelector: "approver-test=" + label}
	lease := Leader{Namespace: ns, Name: "clusterdesk-approver", KeepOnCancel: true,
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}
	replicas := map[string]*running{}
	for _, id := range []string{"replica-1", "replica-2"} {
		l := lease
		l.Identity = id
		replicas[id] = start(t, cfg, &l)
	}
	holder := func() string {
		l, err := admin.CoordinationV1().Leases(ns).Get(ctx, lease.Name, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	eventually(t, 20*time.Second, "a replica takes the Lease", func() bool { return holder() != "" })
	first := holder()

	// The stream: a request every 40 ms, approved and denied in turn, for 2 s
	// before the kill and 6 s after (the Lease expires within 4 s).
	var mu sync.Mutex
	var names []string
	want := map[string]certificatesv1.RequestConditionType{}
	stream := func(d time.Duration) {
		end := time.Now().Add(d)
		for i := 0; time.Now().Before(end); i++ {
			cn, typ := fmt.Sprintf("ok-%s-%d", s, time.Now().UnixNano()), certificatesv1.CertificateApproved
			if i%2 == 1 {
				cn, typ = fmt.Sprintf("no-%s-%d", s, time.Now().UnixNano()), certificatesv1.CertificateDenied
			}
			name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "s", CommonName: cn})
			mu.Lock()
			names, want[name] = append(names, name), typ
			mu.Unlock()
			time.Sleep(40 * time.Millisecond)
		}
	}
	stream(2 * time.Second)
	leader := replicas[first]
	eventually(t, 10*time.Second, "the leader decides some requests before it is killed", func() bool {
		return leader.metric(t, "clusterdesk_approver_decisions_total", "policy=approve-ok-"+s, "verdict=approve", "dry_run=false") > 0
	})
	leader.stop() // killed: the Lease stays held until it expires
	stream(6 * time.Second)

	var other *running
	for id, r := range replicas {
		if id != first {
			other = r
		}
	}
	eventually(t, 20*time.Second, "the other replica takes the Lease", func() bool { h := holder(); return h != "" && h != first })
	var all map[string][]certificatesv1.CertificateSigningRequestCondition
	eventually(t, 30*time.Second, "every request is decided", func() bool {
		all = allDecisions(t, admin)
		for _, n := range names {
			if len(all[n]) == 0 {
				return false
			}
		}
		return true
	})
	// A second decision, were one to slip through, would land after the
	// first: give a stale write time to arrive, then read once more.
	time.Sleep(2 * time.Second)
	all = allDecisions(t, admin)
	if other.metric(t, "clusterdesk_approver_is_leader") != 1 {
		t.Error("the replica that took over does not report itself leader")
	}

	accepted := map[string]int{}
	for _, r := range replicas {
		for _, rec := range auditRecords(t, r.lines.String()) {
			if rec.Result == audit.ResultOK {
				accepted[rec.Name]++
			}
		}
	}
	byFirst, byOther := 0, 0
	for _, rec := range auditRecords(t, leader.lines.String()) {
		if rec.Result == audit.ResultOK {
			byFirst++
		}
	}
	for _, rec := range auditRecords(t, other.lines.String()) {
		if rec.Result == audit.ResultOK {
			byOther++
		}
	}
	var inFlight []string
	for _, n := range names {
		got := all[n]
		if len(got) != 1 || got[0].Type != want[n] {
			t.Errorf("%s: decisions %+v, want exactly one %s", n, got, want[n])
		}
		switch accepted[n] {
		case 1:
		case 0:
			inFlight = append(inFlight, n)
		default:
			t.Errorf("%s: %d accepted writes in the audit lines, want 1", n, accepted[n])
		}
	}
	checkWritesInFlightAtTheKill(t, admin, ns, lease.Name, leader.cfg.Workers, inFlight)
	t.Logf("after %v: %d requests: %d decided by the killed leader, %d by the replica that took over, %d by the leader's writes in flight at the kill",
		time.Since(began).Round(time.Millisecond), len(names), byFirst, byOther, len(inFlight))
	if byOther == 0 {
		t.Error("the replica that took over decided nothing: the kill was not mid-run")
	}
}

// checkWritesInFlightAtTheKill accounts for the requests decided with no
// accepted write in either replica's audit lines. A process killed while it
// sends a decision records nothing of it (the controller's write: "stopped
// mid-write"), as a crashed one could not, yet the API server may have
// applied it: CI saw one such request among 134 (stop 61). Each is allowed
// only when the API server's own audit log shows its decision received
// before the other replica acquired the Lease, so the killed leader sent it,
// and when there are no more of them than the leader's workers, each of
// which holds at most one write. A decision written by the replica that took
// over and left out of its audit lines fails here.
func checkWritesInFlightAtTheKill(t *testing.T, admin kubernetes.Interface, ns, lease string, workers int, names []string) {
	t.Helper()
	if len(names) == 0 {
		return
	}
	if len(names) > workers {
		t.Errorf("%d requests decided with no accepted write in the audit lines, more than the killed leader's %d workers could have had in flight: %v", len(names), workers, names)
	}
	l, err := admin.CoordinationV1().Leases(ns).Get(context.Background(), lease, metav1.GetOptions{})
	if err != nil || l.Spec.AcquireTime == nil {
		t.Fatalf("the Lease's acquire time: %v", err)
	}
	takeover := l.Spec.AcquireTime.Time
	for _, name := range names {
		ev := testcluster.WaitAuditEvent(t, 10*time.Second, func(e testcluster.AuditEvent) bool {
			return e.Verb == "update" && e.ObjectRef != nil && e.ObjectRef.Resource == "certificatesigningrequests" &&
				e.ObjectRef.Name == name && e.ObjectRef.Subresource == "approval"
		})
		if !ev.RequestReceivedTimestamp.Before(takeover) {
			t.Errorf("%s: no accepted write in the replicas' audit lines, and the API server received its decision at %v, not before the other replica acquired the Lease at %v: the replica that decided it left it out of its audit lines",
				name, ev.RequestReceivedTimestamp.Format(time.RFC3339Nano), takeover.Format(time.RFC3339Nano))
		}
	}
}
