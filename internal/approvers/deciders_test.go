package approvers

import (
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

func decidedCSR(signer string, decision certificatesv1.RequestConditionType, reason string, at time.Time, managers ...string) *certificatesv1.CertificateSigningRequest {
	c := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: signer}}
	c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: decision, Status: corev1.ConditionTrue, Reason: reason, LastUpdateTime: metav1.NewTime(at)}}
	c.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl-create", Operation: metav1.ManagedFieldsOperationUpdate, Time: &metav1.Time{Time: at.Add(-time.Hour)}}}
	for i, m := range managers {
		c.ManagedFields = append(c.ManagedFields, metav1.ManagedFieldsEntry{Manager: m, Subresource: "approval", Time: &metav1.Time{Time: at.Add(time.Duration(i) * time.Second)}})
	}
	return c
}

func TestDecidersReadTheApprovalSubresourcesManager(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	const kubelet = "kubernetes.io/kube-apiserver-client-kubelet"
	csrs := []*certificatesv1.CertificateSigningRequest{
		decidedCSR(kubelet, certificatesv1.CertificateApproved, "AutoApproved", now.Add(-3*time.Minute), "kube-controller-manager"),
		decidedCSR(kubelet, certificatesv1.CertificateApproved, "AutoApproved", now.Add(-time.Minute), "kube-controller-manager"),
		decidedCSR(kubelet, certificatesv1.CertificateDenied, "KubectlDeny", now.Add(-2*time.Minute), "kubectl"),
		// the newest approval entry wins when two clients wrote the subresource
		decidedCSR(kubelet, certificatesv1.CertificateApproved, "KubectlApprove", now.Add(-5*time.Minute), "clusterdesk", "kubectl"),
		decidedCSR(kubelet, certificatesv1.CertificateApproved, "Legacy", now.Add(-10*time.Minute)),       // no approval entry
		decidedCSR(kubelet, certificatesv1.CertificateApproved, "AutoApproved", now.Add(-20*time.Minute)), // none either: named by its reason
		decidedCSR("example.com/other", certificatesv1.CertificateApproved, "X", now, "someone"),          // another signer
		{Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: kubelet}},                         // pending
	}
	got := Deciders(csrs, kubelet)
	var summary []string
	for _, d := range got {
		summary = append(summary, d.Manager)
	}
	if !slices.Equal(summary, []string{"kube-controller-manager", "kubectl", "unknown"}) {
		t.Fatalf("deciders %q", summary)
	}
	kcm, kubectl := got[0], got[1]
	if kcm.Approved != 3 || kcm.Denied != 0 || !slices.Equal(kcm.Reasons, []string{"AutoApproved"}) || !kcm.Last.Equal(now.Add(-time.Minute)) {
		t.Errorf("kube-controller-manager: %+v", kcm)
	}
	if kubectl.Approved != 1 || kubectl.Denied != 1 || !slices.Equal(kubectl.Reasons, []string{"KubectlApprove", "KubectlDeny"}) {
		t.Errorf("kubectl: %+v", kubectl)
	}
}

func TestDecidedBy(t *testing.T) {
	now := time.Now()
	for want, c := range map[string]*certificatesv1.CertificateSigningRequest{
		"kubectl":                 decidedCSR("x/y", certificatesv1.CertificateApproved, "AutoApproved", now, "kubectl"),
		"kube-controller-manager": decidedCSR("x/y", certificatesv1.CertificateApproved, "AutoApproved", now),
		"unknown":                 decidedCSR("x/y", certificatesv1.CertificateDenied, "Whatever", now),
		// clusterdesk approver's reason, for a request created without apply
		"clusterdesk-approver": decidedCSR("x/y", certificatesv1.CertificateDenied, "ClusterdeskPolicy", now),
		"":                     {},
	} {
		if got := DecidedBy(c); got != want {
			t.Errorf("DecidedBy = %q, want %q", got, want)
		}
	}
}

func TestByPolicyApprover(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for _, decision := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
		if !ByPolicyApprover(decidedCSR("s", decision, kube.ReasonPolicy, at)) {
			t.Errorf("%s with the approver's reason is the approver's", decision)
		}
	}
	if ByPolicyApprover(decidedCSR("s", certificatesv1.CertificateApproved, kube.ReasonApproved, at)) || ByPolicyApprover(&certificatesv1.CertificateSigningRequest{}) {
		t.Error("a person's decision, or none, is not the approver's")
	}
}
