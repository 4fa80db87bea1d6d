package testcluster

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// AuditEvent is the part of a kube-apiserver audit event (audit.k8s.io/v1,
// level Metadata) that tests look at: who made which request on what.
type AuditEvent struct {
	Stage            string     `json:"stage"`
	Verb             string     `json:"verb"`
	User             AuditUser  `json:"user"`
	ImpersonatedUser *AuditUser `json:"impersonatedUser"`
	UserAgent        string     `json:"userAgent"`
	ObjectRef        *struct {
		Resource    string `json:"resource"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	// Annotations are the event's audit annotations (a
	// ValidatingAdmissionPolicy's auditAnnotations among them).
	Annotations map[string]string `json:"annotations"`
}

// AuditUser is an audit event's user or impersonated user.
type AuditUser struct {
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

// AuditLog is the devcluster's API server audit log (DIR/audit.log).
func AuditLog(t testing.TB) string {
	t.Helper()
	Require(t)
	return filepath.Join(os.Getenv(EnvDir), "audit.log")
}

// WaitAuditEvent reads the audit log until an event matches, or fails the
// test after timeout (the API server writes events as requests complete).
func WaitAuditEvent(t testing.TB, timeout time.Duration, match func(AuditEvent) bool) AuditEvent {
	t.Helper()
	path := AuditLog(t)
	deadline := time.Now().Add(timeout)
	for {
		if ev, ok := findAuditEvent(t, path, match); ok {
			return ev
		}
		if time.Now().After(deadline) {
			t.Fatalf("no matching event in the audit log %s after %v", path, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func findAuditEvent(t testing.TB, path string, match func(AuditEvent) bool) (AuditEvent, bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var ev AuditEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue // a line being written
		}
		if match(ev) {
			return ev, true
		}
	}
	return AuditEvent{}, false
}
