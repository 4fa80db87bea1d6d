package kube

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// readVerbs are what the console does with a registered kind as its own
// identity (the shared informer: list and watch; get for a single object),
// and what a read-only person needs to see its pages.
var readVerbs = []string{"get", "list", "watch"}

// roleFiles are the ClusterRoles outside Go that must follow the registry,
// relative to the repository's root. A kind registered without its rule there
// works in the unit tests and fails only in a real cluster, as a "forbidden"
// banner: this test fails first, naming the kind and the file.
var roleFiles = []struct {
	file, role, whose string
}{
	{"deploy/base/clusterdesk.yaml", "clusterdesk",
		"the console's service account, whose informers fill the shared cache"},
	{"devcluster/internal/access/clusterroles.yaml", "clusterdesk:auditor",
		"the devcluster's read-only user, with whom the integration and e2e tests read every kind"},
	{"deploy/roles/roles.yaml", "clusterdesk-viewer",
		"the viewer role by job, which the chart renders the same (charts/clusterdesk/templates/_helpers.tpl, viewerRules)"},
	{"deploy/roles/roles.yaml", "clusterdesk-auditor",
		"the auditor role by job, which the chart renders the same (charts/clusterdesk/templates/_helpers.tpl, viewerRules)"},
}

// TestEveryKindIsReadableUnderItsClusterRoles: every registered kind has a
// rule with get, list and watch on its group and resource in each ClusterRole
// of roleFiles.
func TestEveryKindIsReadableUnderItsClusterRoles(t *testing.T) {
	for _, f := range roleFiles {
		role := clusterRole(t, filepath.Join("..", "..", f.file), f.role)
		for _, k := range AllKinds() {
			var missing []string
			for _, verb := range readVerbs {
				if !allows(role.Rules, k.Group, k.Resource, verb) {
					missing = append(missing, verb)
				}
			}
			if len(missing) > 0 {
				t.Errorf("%s: %s: ClusterRole %s (%s) does not allow %v on %s in apiGroup %q: add it to a rule with verbs %v",
					k.ID, f.file, f.role, f.whose, missing, k.Resource, k.Group, readVerbs)
			}
		}
	}
}

// TestAllowsReadsRulesAsRBACDoes checks the matcher the test above relies on.
func TestAllowsReadsRulesAsRBACDoes(t *testing.T) {
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"csidrivers"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"flowcontrol.apiserver.k8s.io"}, Resources: []string{"flowschemas"}, Verbs: []string{"*"}},
		{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"watch"}, ResourceNames: []string{"one"}},
	}
	for _, c := range []struct {
		group, resource, verb string
		want                  bool
	}{
		{"storage.k8s.io", "csidrivers", "get", true},
		{"storage.k8s.io", "csidrivers", "watch", false}, // the rule with a name allows no watch of all
		{"storage.k8s.io", "csinodes", "get", false},
		{"", "csidrivers", "get", false},
		{"flowcontrol.apiserver.k8s.io", "flowschemas", "watch", true},
	} {
		if got := allows(rules, c.group, c.resource, c.verb); got != c.want {
			t.Errorf("allows(%q, %q, %q) = %t, want %t", c.group, c.resource, c.verb, got, c.want)
		}
	}
}

// allows reports whether rules let a subject do verb on every object of
// resource in group, as the RBAC authorizer matches them ("*" matches any;
// a rule limited to resourceNames does not cover a list or watch of all).
func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	for _, r := range rules {
		if len(r.ResourceNames) == 0 && has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// clusterRole reads the ClusterRole named name from the YAML documents in path.
func clusterRole(t *testing.T, path, name string) rbacv1.ClusterRole {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var role rbacv1.ClusterRole
		if err := yaml.Unmarshal(doc, &role); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if role.Kind == "ClusterRole" && role.Name == name {
			return role
		}
	}
	t.Fatalf("%s: no ClusterRole %s", path, name)
	return rbacv1.ClusterRole{}
}
