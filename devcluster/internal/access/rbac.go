package access

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

var readOnly = []string{"get", "list", "watch"}

// ClusterRoles grant auditor and approver exactly what the console's
// permission tests expect; admin needs none (system:masters).
func ClusterRoles() []rbacv1.ClusterRole {
	return []rbacv1.ClusterRole{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "clusterdesk:auditor"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: readOnly},
				{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"csidrivers", "csinodes", "storageclasses", "volumeattachments"}, Verbs: readOnly},
				{APIGroups: []string{"flowcontrol.apiserver.k8s.io"}, Resources: []string{"flowschemas", "prioritylevelconfigurations"}, Verbs: readOnly},
				{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations",
					"validatingadmissionpolicies", "validatingadmissionpolicybindings"}, Verbs: readOnly},
				{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: readOnly},
				{APIGroups: []string{""}, Resources: []string{"nodes", "namespaces", "persistentvolumes", "services"}, Verbs: readOnly},
				{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: readOnly},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "clusterdesk:approver"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: readOnly},
				{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests/approval"}, Verbs: []string{"update"}},
				// The CertificateApproval admission plugin checks this
				// permission per signer, so kubelet-serving and custom
				// signers stay out of the approver's reach.
				{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, ResourceNames: []string{"kubernetes.io/kube-apiserver-client"}, Verbs: []string{"approve"}},
			},
		},
	}
}

// OIDCGroupPrefix is what kube-apiserver puts before the groups of an OpenID
// user (idp.Prefix; repeated here because idp imports nothing from access).
const OIDCGroupPrefix = "oidc:"

// ClusterRoleBindings bind the users to their roles. The approver is also
// bound to the built-in system:node-bootstrapper (create CSRs) so the demo
// data has CSRs whose requester is not admin. The OpenID provider's groups
// get what their token-user counterparts have: admins cluster-admin (the
// token admin is in system:masters, which no token from outside may claim),
// approvers and auditors the same roles as approver and auditor.
func ClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	bind := func(name, role string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
		return rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   subjects,
		}
	}
	user := func(name string) rbacv1.Subject {
		return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}
	}
	group := func(name string) rbacv1.Subject {
		return rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: OIDCGroupPrefix + name}
	}
	return []rbacv1.ClusterRoleBinding{
		bind("clusterdesk:auditor", "clusterdesk:auditor", user("auditor")),
		bind("clusterdesk:approver", "clusterdesk:approver", user("approver")),
		bind("clusterdesk:approver:csr-requester", "system:node-bootstrapper", user("approver")),
		bind("clusterdesk:oidc-admins", "cluster-admin", group("clusterdesk-admins")),
		bind("clusterdesk:oidc-auditors", "clusterdesk:auditor", group("clusterdesk-auditors")),
		bind("clusterdesk:oidc-approvers", "clusterdesk:approver", group("clusterdesk-approvers")),
		bind("clusterdesk:oidc-approvers:csr-requester", "system:node-bootstrapper", group("clusterdesk-approvers")),
	}
}

// ApplyRBAC creates the roles and bindings, or updates them to this
// definition if a previous run left different ones.
func ApplyRBAC(ctx context.Context, cs kubernetes.Interface) error {
	roles := cs.RbacV1().ClusterRoles()
	for _, want := range ClusterRoles() {
		_, err := roles.Create(ctx, &want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var got *rbacv1.ClusterRole
			if got, err = roles.Get(ctx, want.Name, metav1.GetOptions{}); err == nil {
				got.Rules = want.Rules
				_, err = roles.Update(ctx, got, metav1.UpdateOptions{})
			}
		}
		if err != nil {
			return fmt.Errorf("ClusterRole %s: %w", want.Name, err)
		}
	}
	bindings := cs.RbacV1().ClusterRoleBindings()
	for _, want := range ClusterRoleBindings() {
		_, err := bindings.Create(ctx, &want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var got *rbacv1.ClusterRoleBinding
			if got, err = bindings.Get(ctx, want.Name, metav1.GetOptions{}); err == nil && got.RoleRef != want.RoleRef {
				// roleRef is immutable: replace the binding.
				if err = bindings.Delete(ctx, want.Name, metav1.DeleteOptions{}); err == nil {
					_, err = bindings.Create(ctx, &want, metav1.CreateOptions{})
				}
			} else if err == nil {
				got.Subjects = want.Subjects
				_, err = bindings.Update(ctx, got, metav1.UpdateOptions{})
			}
		}
		if err != nil {
			return fmt.Errorf("ClusterRoleBinding %s: %w", want.Name, err)
		}
	}
	return nil
}
