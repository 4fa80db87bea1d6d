package handlers

import (
	"slices"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/edit"
	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// TestKindRegistryHalvesAgree: every kind the cache watches (kube.AllKinds)
// has a presentation entry with list, detail, live row and search wiring, a
// shortcut of its own and, unless read-only, an example for its create page;
// and nothing is registered here that the cache does not watch. A kind
// registered in one half only, or half-registered, fails here.
func TestKindRegistryHalvesAgree(t *testing.T) {
	keys := map[string]kube.KindID{"h": "home"} // "g h" is the overview
	var ids []kube.KindID
	for _, k := range kube.AllKinds() {
		ids = append(ids, k.ID)
		kp, ok := pagesByKind[k.ID]
		if !ok {
			t.Errorf("%s: in kube.AllKinds but not in handlers' registeredKinds", k.ID)
			continue
		}
		if kp.id != k.ID {
			t.Errorf("%s: entry says it is %s", k.ID, kp.id)
		}
		if kp.list == nil || kp.detail == nil || kp.row == nil || kp.objects == nil {
			t.Errorf("%s: list %t, detail %t, live row %t, search/activity %t: every kind needs all four",
				k.ID, kp.list != nil, kp.detail != nil, kp.row != nil, kp.objects != nil)
		}
		if k.Title == "" || k.Singular == "" || k.Resource == "" {
			t.Errorf("%s: titles or resource missing: %+v", k.ID, k)
		}
		if len(kp.shortcut) != 1 {
			t.Errorf("%s: shortcut %q is not one key", k.ID, kp.shortcut)
		} else if other, taken := keys[kp.shortcut]; taken {
			t.Errorf("%s: shortcut g %s is %s's already", k.ID, kp.shortcut, other)
		} else {
			keys[kp.shortcut] = k.ID
		}
		_, hasExample, err := edit.Example(k.Singular, k.Group+"/v1")
		if err != nil {
			t.Errorf("%s: example: %v", k.ID, err)
		}
		if editable(k.ID) != hasExample {
			t.Errorf("%s: editable %t but example %t: an editable kind's create page starts from its example, a read-only kind has none",
				k.ID, editable(k.ID), hasExample)
		}
	}
	for _, kp := range registeredKinds {
		if !slices.Contains(ids, kp.id) {
			t.Errorf("%s: registered in handlers but not in kube.AllKinds (no informer, no status)", kp.id)
		}
	}
	if len(registeredKinds) != len(pagesByKind) {
		t.Errorf("%d entries, %d distinct ids", len(registeredKinds), len(pagesByKind))
	}
}
