//go:build integration

package approver

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/approvers"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestWritingAPolicyNeedsApproveOnItsSigners is the attack of issue 43: a
// service account that may create CSRApprovalPolicies, and may not approve,
// writes one approving its own request for a signer the approver is granted.
// The guard shipped with the CRD (deploy/base/csrapprovalpolicies-guard.yaml,
// seeded into the devcluster) refuses it, and refuses the writer changing or
// deleting a policy someone else wrote; who may approve the signer, by its
// name or its domain's wildcard, writes the policy, and the approver runs it.
func TestWritingAPolicyNeedsApproveOnItsSigners(t *testing.T) {
	ctx := context.Background()
	adminCfg := testcluster.RestConfig(t, testcluster.Admin)
	admin := kubernetes.NewForConfigOrDie(adminCfg)
	s := stamp()
	label := "guard-" + s
	const signer = certificatesv1.KubeAPIServerClientSignerName // the shipped approver's grant
	write := rbacv1.PolicyRule{APIGroups: []string{"clusterdesk.io"}, Resources: []string{"csrapprovalpolicies"},
		Verbs: []string{"get", "create", "update", "patch", "delete"}}
	approve := func(name string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{name}, Verbs: []string{"approve"}}
	}
	writer := testcluster.TempServiceAccount(t, "guard-writer-"+s, []rbacv1.PolicyRule{write,
		{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get"}}})
	byName := testcluster.TempServiceAccount(t, "guard-signer-"+s, []rbacv1.PolicyRule{write, approve(signer)})
	byDomain := testcluster.TempServiceAccount(t, "guard-domain-"+s, []rbacv1.PolicyRule{write, approve("kubernetes.io/*")})

	own := testcluster.CreateCSR(t, testcluster.CSR{CommonName: "guard-" + s, Client: kubernetes.NewForConfigOrDie(writer.RestConfig(t))})
	start(t, Config{Rest: approverConfig(t, "approver-g-"+s), PolicySelector: "approver-test=" + label}, nil)

	name := "approve-own-" + s
	mine := policyFor(label, name, "Approve", `request.username == '`+writer.User+`'`, signer)
	_, err := policies(writer.RestConfig(t)).Create(ctx, mine.DeepCopy(), metav1.CreateOptions{})
	if err == nil {
		t.Cleanup(func() { _ = policies(adminCfg).Delete(context.Background(), name, metav1.DeleteOptions{}) })
		// What it buys, shown: the approver decides the writer's own request.
		eventually(t, 30*time.Second, "the writer's policy was admitted (and the approver has not decided yet)", func() bool {
			return len(decisions(t, admin, own)) > 0
		})
		t.Fatalf("the API server admitted a policy from %s, who may not approve %s, and the approver decided the writer's own request: %+v",
			writer.User, signer, decisions(t, admin, own))
	}
	refused(t, err, writer.User, signer)

	// A grant of one signer does not cover its domain's wildcard; a grant of
	// the wildcard covers every signer of the domain (dry runs: admission
	// runs, nothing is stored).
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	wide := policyFor(label, "approve-domain-"+s, "Approve", "false", "kubernetes.io/*")
	_, err = policies(byName.RestConfig(t)).Create(ctx, wide.DeepCopy(), dry)
	refused(t, err, byName.User, "kubernetes.io/*")
	for _, p := range []*policyObj{{wide, "kubernetes.io/*"}, {mine, signer}} {
		if _, err := policies(byDomain.RestConfig(t)).Create(ctx, p.u.DeepCopy(), dry); err != nil {
			t.Errorf("who may approve kubernetes.io/* may not write a policy naming %s: %v", p.signer, err)
		}
	}

	// Who may approve the signer writes the policy, and the approver runs it.
	if _, err := policies(byName.RestConfig(t)).Create(ctx, mine.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("who may approve %s may not write a policy naming it: %v", signer, err)
	}
	t.Cleanup(func() { _ = policies(adminCfg).Delete(context.Background(), name, metav1.DeleteOptions{}) })
	eventually(t, 30*time.Second, "the approver decides under the policy an approver wrote", func() bool {
		d := decisions(t, admin, own)
		return len(d) == 1 && d[0].Type == certificatesv1.CertificateApproved
	})

	// The writer may not change what the approver runs, nor delete a policy
	// (a Deny policy removed widens what the others approve); a change the
	// approver does not read (an annotation) is its own business.
	for what, patch := range map[string]string{
		"its expression": `{"spec":{"expression":"true"}}`,
		"its labels":     `{"metadata":{"labels":{"approver-test":"elsewhere"}}}`,
	} {
		_, err := policies(writer.RestConfig(t)).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		if err == nil {
			t.Errorf("the writer changed %s", what)
			continue
		}
		refused(t, err, writer.User, signer)
	}
	refused(t, policies(writer.RestConfig(t)).Delete(ctx, name, metav1.DeleteOptions{}), writer.User, signer)
	if _, err := policies(writer.RestConfig(t)).Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"annotations":{"note":"x"}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("the writer may not annotate a policy: %v", err)
	}
}

type policyObj struct {
	u      *unstructured.Unstructured
	signer string
}

// refused checks that err is the guard's refusal of user for signer.
func refused(t *testing.T, err error, user, signer string) {
	t.Helper()
	if err == nil {
		t.Errorf("admitted: %s wrote a policy for %s, which it may not approve", user, signer)
		return
	}
	msg := err.Error()
	if !apierrors.IsForbidden(err) || !strings.Contains(msg, approvers.GuardPolicy) || !strings.Contains(msg, user+" may not approve requests for signer "+signer) {
		t.Errorf("%s writing a policy for %s: %v; want the guard's refusal", user, signer, err)
	}
}

// TestABrokenGuardLeavesItsSignerToPeople is the second attack of issue 43:
// an Approve policy and a Deny policy guarding the same signer run; an edit
// through the API leaves the Deny policy's CEL uncompilable. The approver
// must then decide nothing for the signer (a request the Approve policy
// matches stays pending, logged as left to people) until the guard is fixed,
// not let the Approve policy decide alone.
func TestABrokenGuardLeavesItsSignerToPeople(t *testing.T) {
	ctx := context.Background()
	adminCfg := testcluster.RestConfig(t, testcluster.Admin)
	admin := kubernetes.NewForConfigOrDie(adminCfg)
	s := stamp()
	label, prefix, guard := "broken-"+s, "broken-"+s, "deny-guard-"+s
	const signer = certificatesv1.KubeAPIServerClientSignerName
	const guardCEL = `'evil' in request.subject.organizations`
	policy(t, label, "approve-"+s, signer, "Approve", `request.subject.commonName.startsWith('`+prefix+`')`)
	policy(t, label, guard, signer, "Deny", guardCEL)
	r := start(t, Config{Rest: approverConfig(t, "approver-b-"+s), PolicySelector: "approver-test=" + label}, nil)

	// The control: while the guard runs, the Approve policy decides.
	before := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "before", CommonName: prefix + "-before"})
	eventually(t, 30*time.Second, "a request the Approve policy matches is approved while the guard runs", func() bool {
		return len(decisions(t, admin, before)) == 1
	})

	setGuard := func(expression string) {
		t.Helper()
		patch := `{"spec":{"expression":` + strconv.Quote(expression) + `}}`
		if _, err := policies(adminCfg).Patch(ctx, guard, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setGuard(guardCEL + " &&")
	eventually(t, 30*time.Second, "the approver logs that the guard cannot run", func() bool {
		r.metric(t, "clusterdesk_approver_broken_policies") // a scrape rebuilds the policies, as the next request would
		log := r.log.String()
		return strings.Contains(log, "policy cannot run") && strings.Contains(log, guard)
	})

	after := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "after", CommonName: prefix + "-after"})
	eventually(t, 30*time.Second, "the approver leaves the request to people", func() bool {
		if d := decisions(t, admin, after); len(d) > 0 {
			t.Fatalf("decided while the Deny policy guarding %s could not run: %+v", signer, d)
		}
		return strings.Contains(r.log.String(), `until it is fixed" csr=`+after+" ")
	})
	if n := r.metric(t, "clusterdesk_approver_broken_policies"); n != 1 {
		t.Errorf("clusterdesk_approver_broken_policies = %v, want 1", n)
	}

	// Fixed, the policies decide again.
	setGuard(guardCEL)
	eventually(t, 30*time.Second, "the request is approved once the guard runs again", func() bool {
		d := decisions(t, admin, after)
		return len(d) == 1 && d[0].Type == certificatesv1.CertificateApproved
	})
}
