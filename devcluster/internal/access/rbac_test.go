package access

import (
	"strings"
	"testing"
)

// TestClusterRolesParseAndCoverTheBindings: clusterroles.yaml is read strictly
// (a misspelt field fails here, not as a role that silently grants less), and
// every role of ours that a binding names is defined in it.
func TestClusterRolesParseAndCoverTheBindings(t *testing.T) {
	roles, err := ClusterRoles()
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, r := range roles {
		defined[r.Name] = true
	}
	for _, b := range ClusterRoleBindings() {
		if strings.HasPrefix(b.RoleRef.Name, "clusterdesk:") && !defined[b.RoleRef.Name] {
			t.Errorf("binding %s names ClusterRole %s, which clusterroles.yaml does not define", b.Name, b.RoleRef.Name)
		}
	}
	for _, want := range []string{"clusterdesk:auditor", "clusterdesk:approver"} {
		if !defined[want] {
			t.Errorf("clusterroles.yaml defines no %s", want)
		}
	}
}
