package charttest

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestChartRolesByJob: the roles by job are off by default; roles.create
// renders them without bindings, and without the CSR approver unless it has
// signers (a rule with no resourceNames would grant every signer); a job's
// groups render its role and a binding of exactly those groups. What each
// role may do on a cluster is handlers/roles_oidc_integration_test.go's.
func TestChartRolesByJob(t *testing.T) {
	eachHelm(t, func(t *testing.T, h helmCLI) {
		roleNames := func(objs []*unstructured.Unstructured, kind string) []string {
			var out []string
			for _, o := range byKind(objs, kind) {
				if n := o.GetName(); n != "r-clusterdesk" {
					out = append(out, strings.TrimPrefix(n, "r-clusterdesk-"))
				}
			}
			slices.Sort(out)
			return out
		}
		objs := h.render(t, "r", "ns", nil)
		if got := roleNames(objs, "ClusterRole"); len(got) != 0 {
			t.Errorf("default values render roles %v, want none", got)
		}

		objs = h.render(t, "r", "ns", nil, "--set", "roles.create=true")
		if got, want := roleNames(objs, "ClusterRole"), []string{"admission-admin", "apf-admin", "auditor", "viewer"}; !slices.Equal(got, want) {
			t.Errorf("roles.create without signers renders %v, want %v (no CSR approver)", got, want)
		}
		if got := roleNames(objs, "ClusterRoleBinding"); len(got) != 0 {
			t.Errorf("roles.create alone binds %v, want no binding", got)
		}

		objs = h.render(t, "r", "ns", nil, "--set", "roles.csrApprover.signers={example.com/a,example.com/*}",
			"--set", "roles.csrApprover.groups={oidc:oncall,oidc:sre}", "--set", "roles.viewer.groups={oidc:sre}")
		if got, want := roleNames(objs, "ClusterRole"), []string{"csr-approver", "viewer"}; !slices.Equal(got, want) {
			t.Errorf("groups for two jobs render roles %v, want %v", got, want)
		}
		approver := find(t, objs, "ClusterRole", "r-clusterdesk-csr-approver")
		rules, _, _ := unstructured.NestedSlice(approver.Object, "rules")
		signerRules := 0
		for _, r := range rules {
			rule := r.(map[string]any)
			res, _, _ := unstructured.NestedStringSlice(rule, "resources")
			if !slices.Contains(res, "signers") {
				continue
			}
			signerRules++
			names, _, _ := unstructured.NestedStringSlice(rule, "resourceNames")
			verbs, _, _ := unstructured.NestedStringSlice(rule, "verbs")
			if !slices.Equal(names, []string{"example.com/a", "example.com/*"}) || !slices.Equal(verbs, []string{"approve"}) {
				t.Errorf("the signers rule names %v with verbs %v, want exactly the values' signers and approve", names, verbs)
			}
		}
		if signerRules != 1 {
			t.Errorf("%d rules on signers, want 1", signerRules)
		}
		binding := find(t, objs, "ClusterRoleBinding", "r-clusterdesk-csr-approver")
		subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects")
		var groups []string
		for _, s := range subjects {
			m := s.(map[string]any)
			if m["kind"] != "Group" {
				t.Errorf("subject %v, want groups only", m)
			}
			groups = append(groups, m["name"].(string))
		}
		if !slices.Equal(groups, []string{"oidc:oncall", "oidc:sre"}) {
			t.Errorf("the CSR approver is bound to %v", groups)
		}
	})
}
