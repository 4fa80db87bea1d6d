package access

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// clusterRolesYAML holds the test users' ClusterRoles as YAML, not Go: the
// main module (which does not depend on this one) reads the same file in a
// unit test, so a kind the console registers without the auditor's rule to
// read it fails there, naming the kind and this file.
//
//go:embed clusterroles.yaml
var clusterRolesYAML []byte

// ClusterRoles grant auditor and approver exactly what the console's
// permission tests expect (clusterroles.yaml); admin needs none (system:masters).
func ClusterRoles() ([]rbacv1.ClusterRole, error) {
	var out []rbacv1.ClusterRole
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(clusterRolesYAML)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("clusterroles.yaml: %w", err)
		}
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict(doc, &role); err != nil {
			return nil, fmt.Errorf("clusterroles.yaml: %w", err)
		}
		if role.Kind != "ClusterRole" || role.Name == "" || len(role.Rules) == 0 {
			return nil, fmt.Errorf("clusterroles.yaml: a document that is not a named ClusterRole with rules: kind %q, name %q", role.Kind, role.Name)
		}
		out = append(out, role)
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
	wanted, err := ClusterRoles()
	if err != nil {
		return err
	}
	roles := cs.RbacV1().ClusterRoles()
	for _, want := range wanted {
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
