//go:build integration

package charttest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestChartApproverValuesRun starts both Deployments the chart renders for
// examples/approver-on.yaml (pod_integration_test.go): the console, and
// `clusterdesk approver` with its rendered args (dry run, its Lease, its
// metrics address, the policy selector the test sets) as its own rendered
// ServiceAccount, whose rendered RBAC
// (approve for the example's signers, its Lease in the release's namespace)
// is all it has. The approver takes the rendered Lease, and for a pending
// CSR a CSRApprovalPolicy approves it logs, audits (as its service account)
// and counts the decision it would make, through the API server's dry run
// of the approval, while the CSR stays pending.
func TestChartApproverValuesRun(t *testing.T) {
	testcluster.Require(t)
	admin := testcluster.RestConfig(t, testcluster.Admin)
	cs := kubernetes.NewForConfigOrDie(admin)
	ctx := context.Background()
	const release = "clusterdesk-chart"
	restrictedNamespace(t, cs, chartNamespace)
	// A pending request of one of the example's signers, and a policy
	// approving exactly it. The one --set: approver.policySelector (a
	// documented value), so that on a devcluster other tests share the
	// approver runs this test's policy only, not the demo's or theirs.
	name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "chart-approver"})
	policyName := "chart-approver-" + strings.ToLower(strings.TrimPrefix(name, "it-"))
	if len(policyName) > 253 {
		policyName = policyName[:253]
	}
	label := fmt.Sprintf("%d", time.Now().UnixNano())
	objs := render(t, release, chartNamespace, []string{filepath.Join(chartDir, "examples", "approver-on.yaml")},
		"--set", "approver.policySelector=clusterdesk-chart-test="+label)
	applyRendered(t, cs, objs)
	policies := dynamic.NewForConfigOrDie(admin).Resource(kube.CSRApprovalPolicyResource)
	if _, err := policies.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "clusterdesk.io/v1alpha1", "kind": "CSRApprovalPolicy",
		"metadata": map[string]any{"name": policyName, "labels": map[string]any{"clusterdesk-chart-test": label}},
		"spec": map[string]any{
			"signerNames": []any{certificatesv1.KubeAPIServerClientSignerName}, "decision": "Approve", "reason": "ChartTest",
			"message": "the chart's approver test", "expression": `request.subject.commonName == '` + name + `'`,
		},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("policy %s: %v", policyName, err)
	}
	t.Cleanup(func() { _ = policies.Delete(context.Background(), policyName, metav1.DeleteOptions{}) })

	pod := preparePod(t, cs, objs, chartNamespace, release+"-approver")
	args, env := pod.command(t, "approver", nil)
	if args[0] != "approver" || !contains(args, "--dry-run") || !contains(args, "--policy-selector=clusterdesk-chart-test="+label) {
		t.Fatalf("the rendered approver's args %q: want `approver --dry-run ... --policy-selector=...` (approver.dryRun: true)", args)
	}
	args = append(args, "--in-cluster-dir", pod.SADir)
	approver := testcluster.StartProcess(t, consoleBinary(t), args, env)

	// Leader election on the rendered Lease, in the pod's namespace.
	lease := release + "-approver"
	t.Cleanup(func() {
		_ = cs.CoordinationV1().Leases(chartNamespace).Delete(context.Background(), lease, metav1.DeleteOptions{})
	})
	m := approver.WaitLog(t, regexp.MustCompile(`msg="approver: leading" identity=(\S+) lease=`+regexp.QuoteMeta(chartNamespace+"/"+lease)),
		60*time.Second, "the approver leading on Lease "+chartNamespace+"/"+lease)
	l, err := cs.CoordinationV1().Leases(chartNamespace).Get(ctx, lease, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != m[1] {
		t.Fatalf("Lease %s/%s: %v, holder %v; want %s\n%s", chartNamespace, lease, err, l.Spec.HolderIdentity, m[1], approver.Logs())
	}

	// The console, started once the approver leads (it trusts a read of the
	// Lease for 10 s, internal/csrqueue/approver.go).
	console := preparePod(t, cs, objs, chartNamespace, release).startConsole(t, nil)

	// The decision it would make, in its log, its audit lines (stdout) and
	// its metrics; the request stays pending.
	approver.WaitLog(t, regexp.MustCompile(`msg="approver \(dry run\): would decide" csr=`+regexp.QuoteMeta(name)+` decision=Approve policy=`+regexp.QuoteMeta(policyName)),
		30*time.Second, "the approver's dry-run decision on "+name)
	var rec *audit.Record
	for _, line := range strings.Split(approver.Stdout(), "\n") {
		var r audit.Record
		if json.Unmarshal([]byte(line), &r) == nil && r.Name == name {
			rec = &r
		}
	}
	wantUser := "system:serviceaccount:" + chartNamespace + ":" + release + "-approver"
	if rec == nil || !rec.DryRun || rec.Verb != "approve" || rec.Result != audit.ResultOK || rec.User != wantUser {
		t.Errorf("the approver's audit record of %s: %+v; want a dry-run approve, ok, by %s\nstdout:\n%s", name, rec, wantUser, approver.Stdout())
	}
	metrics := approver.WaitLog(t, regexp.MustCompile(`metrics on (http://\S+/metrics)`), time.Second, "the approver's metrics address")
	resp, err := http.Get(metrics[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `clusterdesk_approver_decisions_total{dry_run="true",policy="` + policyName + `",verdict="approve"} 1`; !strings.Contains(string(body), want) {
		t.Errorf("the approver's metrics lack %s", want)
	}
	c, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
	if err != nil || len(c.Status.Conditions) != 0 {
		t.Errorf("%s after the approver's dry run: %v, conditions %+v; want it pending", name, err, c.Status.Conditions)
	}

	// The console beside it tells a person signed in why the request is
	// pending, from the approver's Lease (--approver-lease, rendered).
	client, _ := signInWithToken(t, console, testcluster.Auditor)
	doc, code := getPage(t, client, console.Origin+"/csrs/"+name)
	why, _ := doc.Find(`[data-testid="csr-why"]`).Attr("data-why")
	if code != http.StatusOK || why != "DryRun" {
		t.Errorf("the console beside the approver, GET /csrs/%s: %d, why pending %q (%s); want DryRun\n%s", name, code, why,
			strings.TrimSpace(doc.Find(`[data-testid="csr-why"]`).Text()), console.Logs())
	}
}
