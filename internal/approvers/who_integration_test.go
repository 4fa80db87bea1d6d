//go:build integration

package approvers

import (
	"context"
	"slices"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// TestWhoAgreesWithTheAPIServer walks the devcluster's real RBAC for three
// signers and then has the devcluster's approver user approve a request of
// each: the API server must accept exactly where the walk says the approver
// may, and refuse (403, CertificateApproval admission) elsewhere. Then the
// accepted decision is read back as its decider, the test's own field manager.
func TestWhoAgreesWithTheAPIServer(t *testing.T) {
	testcluster.Require(t)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin))
	approver := kubernetes.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Approver))

	roles, err := admin.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bindings, err := admin.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		signer  string
		usages  []certificatesv1.KeyUsage
		mayWant bool
	}{
		{certificatesv1.KubeAPIServerClientSignerName, nil, true},
		{certificatesv1.KubeletServingSignerName, []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}, false},
		{"example.com/approvers-test", nil, false},
	} {
		a := Who(tc.signer, roles.Items, bindings.Items)
		may := slices.ContainsFunc(a.Approvers, func(h Holder) bool {
			return h.Subject.Kind == "User" && h.Subject.Name == testcluster.Approver
		})
		if may != tc.mayWant {
			t.Errorf("%s: the walk says approver may approve: %v, want %v (approvers %q)", tc.signer, may, tc.mayWant, names(a.Approvers))
		}
		if !slices.ContainsFunc(a.Approvers, func(h Holder) bool { return h.Subject.Name == Superusers }) {
			t.Errorf("%s: system:masters (cluster-admin's binding) is not among the approvers %q", tc.signer, names(a.Approvers))
		}
		name := testcluster.CreateCSR(t, testcluster.CSR{Suffix: "who", Signer: tc.signer, Usages: tc.usages})
		csr, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: kube.ReasonApproved, Message: "the walk said so",
		})
		_, err = approver.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, name, csr, metav1.UpdateOptions{})
		switch {
		case may && err != nil:
			t.Errorf("%s: the walk says approver may approve, the API server refused: %v", tc.signer, err)
		case !may && !apierrors.IsForbidden(err):
			t.Errorf("%s: the walk says approver may not approve, the API server answered %v", tc.signer, err)
		}
		if tc.signer == "example.com/approvers-test" {
			// Only cluster-admin's subjects (system:masters, the OIDC admins) may.
			for _, h := range a.Approvers {
				if !slices.Equal(h.Approve, []string{"cluster-admin"}) {
					t.Errorf("%s: %s may approve through %q; only cluster-admin should grant it on the devcluster", tc.signer, Name(h.Subject), h.Approve)
				}
			}
		}
	}

	list, err := admin.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var items []*certificatesv1.CertificateSigningRequest
	for i := range list.Items {
		items = append(items, &list.Items[i])
	}
	ds := Deciders(items, certificatesv1.KubeAPIServerClientSignerName)
	// The request was created with a plain create, so it has no managed fields
	// (the API server tracks them once an object is applied): the decider is
	// named by the reason the console writes. The seed's decisions were
	// applied, so they are named by their managed fields.
	for _, want := range []string{"clusterdesk", "devcluster-seed"} {
		if !slices.ContainsFunc(ds, func(d Decider) bool { return d.Manager == want && d.Approved >= 1 }) {
			t.Errorf("no approval by %s read back: %+v", want, ds)
		}
	}
}
