package present

import (
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// TestColumnPrioritiesFollowTheKindRegistry: columnPriorities has an entry
// for every registered kind (internal/kube/kinds.go) and none for a kind
// that is not registered (a renamed or removed kind leaves a dead entry).
// handlers' TestEveryKindListHasColumnPriorities checks that each list
// presenter really uses its entry.
func TestColumnPrioritiesFollowTheKindRegistry(t *testing.T) {
	lists := map[string]bool{"csrqueue": true} // the CSR queue: a list of its own
	for _, k := range kube.AllKinds() {
		lists[string(k.ID)] = true
		if len(columnPriorities[string(k.ID)]) == 0 {
			t.Errorf("%s: registered, but internal/present/column_priority.go says nothing about its columns", k.ID)
		}
	}
	for kind := range columnPriorities {
		if !lists[kind] {
			t.Errorf("%s: internal/present/column_priority.go has priorities for a list that is not a registered kind", kind)
		}
	}
}
