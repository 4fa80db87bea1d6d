package approvers

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const signer = "example.com/serving"

func role(name string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func rule(resources, verbs, names []string, groups ...string) rbacv1.PolicyRule {
	if groups == nil {
		groups = []string{"certificates.k8s.io"}
	}
	return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs, ResourceNames: names}
}

func bindTo(roleName string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "b-" + roleName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName},
		Subjects:   subjects,
	}
}

func user(n string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: n}
}
func group(n string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: n}
}
func sa(ns, n string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: n}
}

var (
	update  = rule([]string{"certificatesigningrequests/approval"}, []string{"update"}, nil)
	approve = func(names ...string) rbacv1.PolicyRule { return rule([]string{"signers"}, []string{"approve"}, names) }
)

func names(hs []Holder) []string {
	var out []string
	for _, h := range hs {
		out = append(out, Name(h.Subject))
	}
	return out
}

// TestWhoFollowsTheAuthorizersRules: the grants that let a subject approve,
// each as RBAC spells it, and the near misses that do not.
func TestWhoFollowsTheAuthorizersRules(t *testing.T) {
	roles := []rbacv1.ClusterRole{
		role("exact", update, approve(signer)),
		role("domain-wildcard", update, approve("example.com/*")),
		role("every-signer", update, approve()),                     // no resourceNames: every signer
		role("stars", rule([]string{"*"}, []string{"*"}, nil, "*")), // cluster-admin's shape
		role("star-subresource", rule([]string{"*/approval"}, []string{"update"}, nil), approve(signer)),
		role("other-signer", update, approve("example.com/client")), // another signer of the domain
		role("other-domain-wildcard", update, approve("example.org/*")),
		role("update-only-some-csrs", rule([]string{"certificatesigningrequests/approval"}, []string{"update"}, []string{"csr-1"}), approve(signer)),
		role("wrong-group", rule([]string{"signers"}, []string{"approve"}, []string{signer}, ""), update),
		role("signer-verb-sign", update, rule([]string{"signers"}, []string{"sign"}, []string{signer})),
		role("approve-only", approve(signer)),
		role("update-only", update),
	}
	var bindings []rbacv1.ClusterRoleBinding
	for _, r := range roles {
		bindings = append(bindings, bindTo(r.Name, user("u-"+r.Name)))
	}
	// A RoleBinding-like reference to a Role grants nothing cluster-wide, and
	// a binding to a missing ClusterRole grants nothing.
	bindings = append(bindings,
		rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "exact"}, Subjects: []rbacv1.Subject{user("u-role-ref")}},
		bindTo("missing", user("u-missing")),
		// One subject holding the two permissions through two bindings can approve.
		bindTo("approve-only", sa("kube-system", "split")), bindTo("update-only", sa("kube-system", "split")),
		// A group, and a service account spelled with an API group.
		bindTo("exact", group("approvers"), rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, APIGroup: "x", Namespace: "ops", Name: "bot"}),
	)

	a := Who(signer, roles, bindings)
	want := []string{"approvers", "u-domain-wildcard", "u-every-signer", "u-exact", "u-star-subresource", "u-stars",
		"system:serviceaccount:kube-system:split", "system:serviceaccount:ops:bot"}
	if got := names(a.Approvers); !slices.Equal(got, want) {
		t.Errorf("approvers\n got %q\nwant %q", got, want)
	}
	wantPartial := []string{"u-approve-only", "u-other-domain-wildcard", "u-other-signer", "u-signer-verb-sign", "u-update-only", "u-update-only-some-csrs", "u-wrong-group"}
	if got := names(a.Partial); !slices.Equal(got, wantPartial) {
		t.Errorf("partial\n got %q\nwant %q", got, wantPartial)
	}
	if a.Nobody() || !a.Specific() {
		t.Errorf("Nobody() %v, Specific() %v with approvers of this signer", a.Nobody(), a.Specific())
	}
	for _, h := range a.Approvers {
		broad := h.Subject.Name == "u-every-signer" || h.Subject.Name == "u-stars"
		if h.Broad != broad {
			t.Errorf("%s: Broad %v, want %v", Name(h.Subject), h.Broad, broad)
		}
	}
	for _, h := range a.Approvers {
		if h.Subject.Name == "split" && (!slices.Equal(h.Approve, []string{"approve-only"}) || !slices.Equal(h.Update, []string{"update-only"})) {
			t.Errorf("split holder: approve via %q, update via %q", h.Approve, h.Update)
		}
	}
}

// TestNobodyButSuperusers: a signer only cluster-admin's system:masters may
// approve is one whose requests stay pending.
func TestNobodyButSuperusers(t *testing.T) {
	roles := []rbacv1.ClusterRole{role("cluster-admin", rule([]string{"*"}, []string{"*"}, nil, "*")), role("client-approver", update, approve("kubernetes.io/kube-apiserver-client"))}
	bindings := []rbacv1.ClusterRoleBinding{bindTo("cluster-admin", group(Superusers)), bindTo("client-approver", user("alice"))}
	if a := Who("kubernetes.io/kubelet-serving", roles, bindings); !a.Nobody() || a.Specific() || len(a.Approvers) != 1 {
		t.Errorf("kubelet-serving: Nobody %v, Specific %v, approvers %q", a.Nobody(), a.Specific(), names(a.Approvers))
	}
	if a := Who("kubernetes.io/kube-apiserver-client", roles, bindings); a.Nobody() || !a.Specific() || !slices.Equal(names(a.Approvers), []string{Superusers, "alice"}) {
		t.Errorf("kube-apiserver-client: Nobody %v, Specific %v, approvers %q", a.Nobody(), a.Specific(), names(a.Approvers))
	}
	// Administrators bound to cluster-admin may approve anything: somebody
	// can, nobody was given this signer in particular.
	bindings = append(bindings, bindTo("cluster-admin", group("oidc:admins")))
	if a := Who("kubernetes.io/kubelet-serving", roles, bindings); a.Nobody() || a.Specific() {
		t.Errorf("kubelet-serving with admins: Nobody %v, Specific %v", a.Nobody(), a.Specific())
	}
	if a := Who("kubernetes.io/kube-apiserver-client", nil, nil); !a.Nobody() {
		t.Error("no RBAC objects at all: Nobody() false")
	}
}
