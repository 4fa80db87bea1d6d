package testcluster

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFindAuditEventPassesOverReads: a read's line is never unmarshalled
// nor matched (whatever its URI holds), a write's is.
func TestFindAuditEventPassesOverReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	lines := `{"stage":"ResponseComplete","requestURI":"/api?x=\"verb\":\"create\"","verb":"get","objectRef":{"resource":"configmaps","name":"cm"}}
{"stage":"ResponseComplete","requestURI":"/api?x=\"verb\":\"get\"","verb":"create","objectRef":{"resource":"configmaps","name":"cm"}}
`
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	seen := 0
	ev, ok := findAuditEvent(t, path, func(ev AuditEvent) bool {
		seen++
		return ev.ObjectRef != nil && ev.ObjectRef.Name == "cm"
	})
	if !ok || ev.Verb != "create" || seen != 1 {
		t.Errorf("found %v %+v after matching %d events, want the create alone", ok, ev, seen)
	}
}
