//go:build integration

package approver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/approvers"
	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestApproverDecidesWhatItsPoliciesDecide runs the approver as the shipped
// ServiceAccount and ClusterRole against real requests: it approves a node's
// serving request for the Node's own addresses, denies what a deny policy
// denies, and leaves to people a request no policy matches, one whose SANs
// are not its Node's, one for a Node that does not exist, and one two
// policies disagree on. Each decision names its policy and is audited once.
func TestApproverDecidesWhatItsPoliciesDecide(t *testing.T) {
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	ctx := context.Background()
	s := stamp()
	label := "verdicts-" + s
	nodeName := "approver-" + s
	node, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.CoreV1().Nodes().Delete(ctx, nodeName, metav1.DeleteOptions{}) })
	node.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeHostName, Address: nodeName + ".example.com"},
		{Type: corev1.NodeInternalIP, Address: "10.9.8.7"},
	}
	if _, err := admin.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The demo policy's rule on SANs, for this test's nodes only.
	servingExpression := `request.subject.commonName.startsWith('system:node:approver-` + s + `') && node != null &&
		 request.dnsNames.all(n, n in node.addresses) && request.ipAddresses.all(ip, ip in node.addresses)`
	saExpression := `request.subject.commonName == 'system:serviceaccount:approver-` + s + `:x'`
	policy(t, label, "approve-serving-"+s, certificatesv1.KubeletServingSignerName, "Approve", servingExpression)
	policy(t, label, "deny-sa-names-"+s, certificatesv1.KubeAPIServerClientSignerName, "Deny", saExpression)
	policy(t, label, "conflict-approve-"+s, certificatesv1.KubeAPIServerClientSignerName, "Approve",
		`request.subject.commonName == 'conflict-`+s+`'`)
	policy(t, label, "conflict-deny-"+s, certificatesv1.KubeAPIServerClientSignerName, "Deny",
		`request.subject.commonName == 'conflict-`+s+`'`)

	serving := testcluster.CSR{Signer: certificatesv1.KubeletServingSignerName, CommonName: "system:node:" + nodeName,
		Organizations: []string{"system:nodes"},
		Usages:        []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth}}
	// Pending ones first: the queue is worked in order, so once the last
	// decision is in, the requests before it were evaluated too.
	left := map[string]string{
		testcluster.CreateCSR(t, testcluster.CSR{Suffix: "nomatch"}): "no policy matches",
		testcluster.CreateCSR(t, serving.With("foreign-san")):        "a SAN not the Node's",
		testcluster.CreateCSR(t, testcluster.CSR{Suffix: "nonode", Signer: certificatesv1.KubeletServingSignerName,
			CommonName: "system:node:approver-" + s + "-gone", Organizations: []string{"system:nodes"}, Usages: serving.Usages}): "no such Node",
		testcluster.CreateCSR(t, testcluster.CSR{Suffix: "conflict", CommonName: "conflict-" + s}): "policies disagree",
	}
	for name, why := range left {
		if why == "a SAN not the Node's" {
			// Recreated with the foreign SAN (CreateCSR has made it without).
			testcluster.RecreateCSR(t, name, testcluster.CSR{Signer: serving.Signer, CommonName: serving.CommonName,
				Organizations: serving.Organizations, Usages: serving.Usages, DNSNames: []string{"elsewhere.example.com"}})
		}
	}
	ownSANs := serving.With("own")
	ownSANs.DNSNames, ownSANs.IPs = []string{nodeName + ".example.com"}, []string{"10.9.8.7"}
	approved := testcluster.CreateCSR(t, ownSANs)
	denied := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "sa", CommonName: "system:serviceaccount:approver-" + s + ":x"})

	r := start(t, Config{Rest: approverConfig(t, "approver-a-"+s), PolicySelector: "approver-test=" + label}, nil)
	eventually(t, 30*time.Second, "the approver decides both requests", func() bool {
		return len(decisions(t, admin, approved)) > 0 && len(decisions(t, admin, denied)) > 0
	})
	eventually(t, 10*time.Second, "the conflict is counted", func() bool {
		return r.metric(t, "clusterdesk_approver_undecided_total", "reason=conflict") == 1
	})

	for name, want := range map[string]struct {
		typ                certificatesv1.RequestConditionType
		policy, expression string
	}{approved: {certificatesv1.CertificateApproved, "approve-serving-" + s, servingExpression}, denied: {certificatesv1.CertificateDenied, "deny-sa-names-" + s, saExpression}} {
		got := decisions(t, admin, name)
		if len(got) != 1 || got[0].Type != want.typ || got[0].Reason != kube.ReasonPolicy {
			t.Errorf("%s: conditions %+v, want one %s by %s with reason %s", name, got, want.typ, want.policy, kube.ReasonPolicy)
			continue
		}
		// The message traces the decision to the policy's version (issue 47, item 4).
		if _, v, words, ok := csrpolicy.ParseDecisionMessage(got[0].Message); !ok || v.Policy != want.policy || v.Generation != 1 ||
			v.Hash != csrpolicy.ExpressionHash(want.expression) || words != "test policy "+want.policy {
			t.Errorf("%s: message %q, want %s's generation 1 and its expression's hash", name, got[0].Message, want.policy)
		}
	}
	// "Who approves" and the agreement page name the approver as the decider.
	for _, name := range []string{approved, denied} {
		c, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if by := approvers.DecidedBy(c); by != FieldManager {
			t.Errorf("%s: decided by %q, want %s", name, by, FieldManager)
		}
	}
	for name, why := range left {
		if got := decisions(t, admin, name); len(got) != 0 {
			t.Errorf("%s (%s) was decided: %+v", name, why, got)
		}
	}
	if got := r.metric(t, "clusterdesk_approver_decisions_total", "policy=approve-serving-"+s, "verdict=approve", "dry_run=false"); got != 1 {
		t.Errorf("decisions of the serving policy: %v, want 1", got)
	}

	// One audit line per decision, in the console's format, as the approver.
	recs := auditRecords(t, r.lines.String())
	if len(recs) != 2 {
		t.Fatalf("audit lines %v, want 2", recs)
	}
	for _, rec := range recs {
		if rec.Result != audit.ResultOK || rec.DryRun || rec.User != "system:serviceaccount:clusterdesk:clusterdesk-approver" ||
			rec.Kind != "CertificateSigningRequest" || (!strings.HasPrefix(rec.Reason, "approved by policy ") && !strings.HasPrefix(rec.Reason, "denied by policy ")) || rec.RVAfter == "" {
			t.Errorf("audit record %+v", rec)
		}
		if (rec.Name == approved) != (rec.Verb == "approve") {
			t.Errorf("audit record of %s says %s", rec.Name, rec.Verb)
		}
	}
}

func auditRecords(t *testing.T, lines string) []audit.Record {
	t.Helper()
	var out []audit.Record
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		if l == "" {
			continue
		}
		var rec audit.Record
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, rec)
	}
	return out
}
