package testcluster

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// DeployPolicy creates a ValidatingAdmissionPolicy and its binding and
// deletes both when the test ends (the binding first). The API server
// enforces them once its informers have them, and keeps a deleted one a
// moment: a test's policy should match only the test's own objects.
func DeployPolicy(t testing.TB, cs kubernetes.Interface, pol *admissionregistrationv1.ValidatingAdmissionPolicy, bnd *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	ctx := context.Background()
	vap := cs.AdmissionregistrationV1()
	if _, err := vap.ValidatingAdmissionPolicies().Create(ctx, pol, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = vap.ValidatingAdmissionPolicies().Delete(context.Background(), pol.Name, metav1.DeleteOptions{})
	})
	if _, err := vap.ValidatingAdmissionPolicyBindings().Create(ctx, bnd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = vap.ValidatingAdmissionPolicyBindings().Delete(context.Background(), bnd.Name, metav1.DeleteOptions{})
	})
}
