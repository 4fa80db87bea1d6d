package testcluster

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ServiceAccount is a test identity with a bearer token from the TokenRequest
// API: the kind of token a person pastes into token mode.
type ServiceAccount struct {
	User   string   // system:serviceaccount:<namespace>:<name>
	Groups []string // the groups the API server gives it
	Token  string
}

// RestConfig returns a client config for the server that authenticates with
// the service account's token only.
func (sa ServiceAccount) RestConfig(t testing.TB) *rest.Config {
	t.Helper()
	c := rest.AnonymousClientConfig(RestConfig(t, Admin))
	c.BearerToken = sa.Token
	return c
}

// NewServiceAccount makes (or reuses) the ServiceAccount name in namespace
// default, binds it to a ClusterRole of the same name with rules, and returns
// it with a one-hour token.
func NewServiceAccount(t testing.TB, name string, rules []rbacv1.PolicyRule) ServiceAccount {
	t.Helper()
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(RestConfig(t, Admin))
	const ns = "default"
	_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("service account %s: %v", name, err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		got, gerr := cs.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		if gerr != nil {
			t.Fatal(gerr)
		}
		got.Rules = rules
		_, err = cs.RbacV1().ClusterRoles().Update(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("cluster role %s: %v", name, err)
		}
	} else if err != nil {
		t.Fatalf("cluster role %s: %v", name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("cluster role binding %s: %v", name, err)
	}
	hour := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s: %v", name, err)
	}
	return ServiceAccount{
		User:   "system:serviceaccount:" + ns + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		Token:  tr.Status.Token,
	}
}

// TempServiceAccount is NewServiceAccount for this test only: the
// ServiceAccount, its ClusterRole and binding are deleted when the test ends,
// so that no later page or test meets a grant it did not make.
func TempServiceAccount(t testing.TB, name string, rules []rbacv1.PolicyRule) ServiceAccount {
	t.Helper()
	sa := NewServiceAccount(t, name, rules)
	cs := kubernetes.NewForConfigOrDie(RestConfig(t, Admin))
	t.Cleanup(func() {
		ctx := context.Background()
		_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = cs.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
		_ = cs.CoreV1().ServiceAccounts("default").Delete(ctx, name, metav1.DeleteOptions{})
	})
	return sa
}
