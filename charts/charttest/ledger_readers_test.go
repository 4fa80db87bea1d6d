package charttest

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestChartLedgerReaders: a new install gates the ledger (--ledger-readers
// granted, README "Roles by job"), ledger.readers=listers keeps the old
// behaviour, and of the roles by job exactly the auditor, the APF admin
// (the what-if's recorded traffic) and the admission admin (the replay's
// recorded writes) are granted get on clusterdesk.io/ledger.
func TestChartLedgerReaders(t *testing.T) {
	args := func(objs []*unstructured.Unstructured) []string {
		d := find(t, objs, "Deployment", "r-clusterdesk")
		cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		a, _, _ := unstructured.NestedStringSlice(cs[0].(map[string]any), "args")
		return a
	}
	objs := render(t, "r", "ns", nil, "--set", "roles.create=true", "--set", "roles.csrApprover.signers={example.com/a}")
	if a := args(objs); !slices.Contains(a, "--ledger-readers=granted") {
		t.Errorf("default values: the console's args %v lack --ledger-readers=granted", a)
	}
	if a := args(render(t, "r", "ns", nil, "--set", "ledger.readers=listers")); !slices.Contains(a, "--ledger-readers=listers") {
		t.Errorf("ledger.readers=listers: the console's args %v lack --ledger-readers=listers", a)
	}
	for role, want := range map[string]bool{"viewer": false, "auditor": true, "csr-approver": false, "apf-admin": true, "admission-admin": true} {
		rules, _, _ := unstructured.NestedSlice(find(t, objs, "ClusterRole", "r-clusterdesk-"+role).Object, "rules")
		granted := false
		for _, r := range rules {
			rule := r.(map[string]any)
			groups, _, _ := unstructured.NestedStringSlice(rule, "apiGroups")
			res, _, _ := unstructured.NestedStringSlice(rule, "resources")
			verbs, _, _ := unstructured.NestedStringSlice(rule, "verbs")
			if slices.Contains(groups, "clusterdesk.io") && slices.Contains(res, "ledger") && slices.Contains(verbs, "get") {
				granted = true
			}
		}
		if granted != want {
			t.Errorf("the %s role grants get on clusterdesk.io/ledger: %v, want %v", role, granted, want)
		}
	}
}
