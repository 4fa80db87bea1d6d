package handlers

import (
	"testing"

	"github.com/clusterdesk/clusterdesk/handlers/kinds"
)

// TestKindHooksAreDeclaredKinds: the root adds its hooks only to kinds the
// registry declares (handlers/kinds): a hook left behind by a renamed or
// removed kind would never run.
func TestKindHooksAreDeclaredKinds(t *testing.T) {
	for id := range hooksByKind {
		if _, ok := kinds.Of(id); !ok {
			t.Errorf("%s: has hooks in kind_hooks.go but no declaration in handlers/kinds", id)
		}
	}
}
