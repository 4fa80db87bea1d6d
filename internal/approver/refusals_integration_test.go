//go:build integration

package approver

import (
	"context"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestApproverIsRefusedASignerNotGranted: a policy for a signer the shipped
// ClusterRole does not grant. The API server refuses the approver's decision
// with 403; the approver counts and logs it, audits the refusal, leaves the
// request pending and does not try again in a loop.
func TestApproverIsRefusedASignerNotGranted(t *testing.T) {
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	s := stamp()
	label := "forbidden-" + s
	const signer = "approver-test.clusterdesk.io/not-granted"
	policy(t, label, "approve-not-granted-"+s, signer, "Approve", `request.subject.commonName == 'refused-`+s+`'`)
	name := testcluster.CreateCSR(t, testcluster.CSR{Signer: signer, CommonName: "refused-" + s})

	r := start(t, Config{Rest: approverConfig(t, "approver-c-"+s), PolicySelector: "approver-test=" + label}, nil)
	eventually(t, 30*time.Second, "the refusal is counted", func() bool {
		return r.metric(t, "clusterdesk_approver_errors_total", "kind="+ErrForbidden) == 1
	})
	time.Sleep(3 * time.Second) // a hot loop would have tried dozens of times by now
	if n := r.metric(t, "clusterdesk_approver_errors_total", "kind="+ErrForbidden); n != 1 {
		t.Errorf("%v refusals counted, want 1: the approver tries again in a loop", n)
	}
	if got := decisions(t, admin, name); len(got) != 0 {
		t.Errorf("decided: %+v", got)
	}
	if log := r.log.String(); !strings.Contains(log, "refused the decision") || !strings.Contains(log, signer) {
		t.Errorf("the log does not name the refusal and the signer:\n%s", log)
	}
	recs := auditRecords(t, r.lines.String())
	if len(recs) != 1 || recs[0].Result != audit.ResultDenied || recs[0].Status != 403 || recs[0].Name != name {
		t.Errorf("audit records %+v, want one refusal (403) of %s", recs, name)
	}
}

// TestApproverDryRunWritesNothing: in a dry run the approver logs, counts
// and audits what it would decide (once per request, however often it is
// evaluated again), and the request stays pending. The decision is the API
// server's dry run, so a signer not granted is reported already.
func TestApproverDryRunWritesNothing(t *testing.T) {
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	s := stamp()
	label := "dry-" + s
	policy(t, label, "approve-dry-"+s, certificatesv1.KubeAPIServerClientSignerName, "Approve", `request.subject.commonName == 'dry-`+s+`'`)
	name := testcluster.CreateCSR(t, testcluster.CSR{CommonName: "dry-" + s})
	const notGranted = "approver-test.clusterdesk.io/not-granted"
	policy(t, label, "approve-dry-not-granted-"+s, notGranted, "Approve", `request.subject.commonName == 'dry-refused-`+s+`'`)
	refused := testcluster.CreateCSR(t, testcluster.CSR{Signer: notGranted, CommonName: "dry-refused-" + s})

	r := start(t, Config{Rest: approverConfig(t, "approver-d-"+s), PolicySelector: "approver-test=" + label, DryRun: true}, nil)
	counted := func() float64 {
		return r.metric(t, "clusterdesk_approver_decisions_total", "policy=approve-dry-"+s, "verdict=approve", "dry_run=true")
	}
	eventually(t, 30*time.Second, "the would-be decision and the refusal are counted", func() bool {
		return counted() == 1 && r.metric(t, "clusterdesk_approver_errors_total", "kind="+ErrForbidden) == 1
	})
	// A second policy makes the approver evaluate every pending request again.
	policy(t, label, "unrelated-"+s, certificatesv1.KubeAPIServerClientSignerName, "Deny", `request.subject.commonName == 'nobody-`+s+`'`)
	time.Sleep(2 * time.Second)
	if n, f := counted(), r.metric(t, "clusterdesk_approver_errors_total", "kind="+ErrForbidden); n != 1 || f != 1 {
		t.Errorf("counted %v times and refused %v times, want once each", n, f)
	}
	for _, n := range []string{name, refused} {
		if got := decisions(t, admin, n); len(got) != 0 {
			t.Errorf("a dry run decided %s: %+v", n, got)
		}
	}
	if !strings.Contains(r.log.String(), "would decide") {
		t.Errorf("the log does not say what would be decided:\n%s", r.log.String())
	}
	recs := map[string]audit.Record{}
	lines := auditRecords(t, r.lines.String())
	for _, rec := range lines {
		recs[rec.Name] = rec
	}
	if ok, no := recs[name], recs[refused]; len(lines) != 2 || !ok.DryRun || ok.Verb != "approve" || ok.Result != audit.ResultOK ||
		!no.DryRun || no.Result != audit.ResultDenied {
		t.Errorf("audit records %+v, want a dry-run approval of %s and a dry-run refusal of %s", lines, name, refused)
	}
}

// TestDecisionOnAStaleReadIsRefused is the guard against two decisions: a
// decision written on the request as read before someone else decided it
// (another replica, a person) is refused by the API server with 409, and the
// request keeps the one decision it has.
func TestDecisionOnAStaleReadIsRefused(t *testing.T) {
	adminCfg := testcluster.RestConfig(t, testcluster.Admin)
	admin := kubernetes.NewForConfigOrDie(adminCfg)
	ctx := context.Background()
	name := testcluster.CreateCSR(t, testcluster.CSR{})
	stale, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := APIDecider{Client: admin}
	if _, err := d.Decide(ctx, stale, csrpolicy.Verdict{Policy: "first", Version: csrpolicy.Version{Policy: "first", Generation: 1, Hash: csrpolicy.ExpressionHash("true")}, Matched: true, Decision: csrpolicy.Deny}); err != nil {
		t.Fatal(err)
	}
	_, err = d.Decide(ctx, stale, csrpolicy.Verdict{Policy: "second", Matched: true, Decision: csrpolicy.Deny})
	if !apierrors.IsConflict(err) {
		t.Errorf("a decision on the stale read: err = %v, want Conflict", err)
	}
	if got := decisions(t, admin, name); len(got) != 1 || !strings.HasPrefix(got[0].Message, "denied by policy first (generation 1, ") {
		t.Errorf("conditions %+v, want the first decision only", got)
	}
}
