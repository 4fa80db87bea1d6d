package approvers

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// TestPolicyWritersAreListed: who may write CSRApprovalPolicies is listed
// beside who may approve, each marked by whether the guard lets it write a
// policy naming this signer (it may approve the signer itself).
func TestPolicyWritersAreListed(t *testing.T) {
	write := func(verbs ...string) rbacv1.PolicyRule {
		return rule([]string{"csrapprovalpolicies"}, verbs, nil, "clusterdesk.io")
	}
	roles := []rbacv1.ClusterRole{
		role("policy-author", write("get", "create")),
		role("policy-patcher", write("patch")),
		role("policy-remover", write("delete")),
		role("policy-reader", write("get", "list", "watch")),
		role("wrong-group", rule([]string{"csrapprovalpolicies"}, []string{"create"}, nil, "example.com")),
		role("signer-approver", approve(signer)),
		role("cluster-admin", rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}),
	}
	bindings := []rbacv1.ClusterRoleBinding{
		bindTo("policy-author", sa("team", "writer"), user("trusted")),
		bindTo("signer-approver", user("trusted")),
		bindTo("policy-patcher", group("patchers")),
		bindTo("policy-remover", user("remover")),
		bindTo("policy-reader", user("reader")),
		bindTo("wrong-group", user("elsewhere")),
		bindTo("cluster-admin", group(Superusers)),
	}
	got := map[string]Writer{}
	for _, w := range Who(signer, roles, bindings).PolicyWriters {
		got[Name(w.Subject)] = w
	}
	want := map[string]struct {
		verbs             []string
		guarded, everyone bool
	}{
		"system:serviceaccount:team:writer": {verbs: []string{"create"}},
		"trusted":                           {verbs: []string{"create"}, guarded: true},
		"patchers":                          {verbs: []string{"patch"}},
		"remover":                           {verbs: []string{"delete"}},
		Superusers:                          {verbs: writeVerbs, guarded: true, everyone: true},
	}
	if len(got) != len(want) {
		t.Errorf("writers %v, want %d of them (readers and other groups' kinds are none)", got, len(want))
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s is not listed as a policy writer", name)
			continue
		}
		if !slices.Equal(g.Verbs, w.verbs) || g.Guarded != w.guarded || g.Superusers != w.everyone {
			t.Errorf("%s: %+v, want verbs %v, guarded %v, superusers %v", name, g, w.verbs, w.guarded, w.everyone)
		}
	}
}
