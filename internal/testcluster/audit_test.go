package testcluster

import (
	"os"
	"path/filepath"
	"strings"
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

// An event after a line longer than any fixed buffer (a deletecollection's
// RequestResponse event holds every deleted object) is still found.
func TestFindAuditEventReadsPastAHugeLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	huge := `{"stage":"ResponseComplete","verb":"deletecollection","responseObject":{"items":"` + strings.Repeat("x", 9<<20) + `"}}`
	wanted := `{"stage":"ResponseComplete","verb":"create","objectRef":{"resource":"configmaps","name":"after-the-huge-one"}}`
	if err := os.WriteFile(path, []byte(huge+"\n"+`{"verb":"get"}`+"\n"+wanted+"\n"+`{"stage":"Resp`), 0o644); err != nil {
		t.Fatal(err)
	}
	ev, ok := findAuditEvent(t, path, func(e AuditEvent) bool { return e.ObjectRef != nil && e.ObjectRef.Name == "after-the-huge-one" })
	if !ok || ev.Verb != "create" {
		t.Fatalf("the event after a 9 MiB line was not found: %+v %v", ev, ok)
	}
}
