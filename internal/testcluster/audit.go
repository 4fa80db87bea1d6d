package testcluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
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
	// RequestReceivedTimestamp is when the API server received the request.
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
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

// WaitAuditEvent reads the audit log until a write's event matches, or
// fails the test after timeout (the API server writes events as requests
// complete). Reads are passed over unread: the policy records every read
// since issue 46 (most of the log's lines), and the tests wait for writes.
// The log's rotated files (kube-apiserver --audit-log-maxsize, named
// audit-<time>.log) are read too, after it: reads fill the log faster, and
// an event must not go missing because the log rotated after it.
func WaitAuditEvent(t testing.TB, timeout time.Duration, match func(AuditEvent) bool) AuditEvent {
	t.Helper()
	path := AuditLog(t)
	deadline := time.Now().Add(timeout)
	for {
		rotated, err := filepath.Glob(filepath.Join(filepath.Dir(path), "audit-[0-9]*.log"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range append([]string{path}, rotated...) {
			if ev, ok := findAuditEvent(t, p, match); ok {
				return ev
			}
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
	// A bufio.Reader, not a Scanner: an event has no length limit (a
	// deletecollection's RequestResponse event holds every deleted object),
	// and a Scanner stops at the first line over its buffer, hiding every
	// event after it (CI saw "no matching event" while the event was there).
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && !isRead(line) {
			var ev AuditEvent
			// A line that does not parse is the one being written.
			if json.Unmarshal(line, &ev) == nil && match(ev) {
				return ev, true
			}
		}
		if err == io.EOF {
			return AuditEvent{}, false
		}
		if err != nil {
			t.Fatalf("audit log %s: %v", path, err)
		}
	}
}

// readVerbs are how a read's event spells its verb: a quoted key and value
// can only be the event's own field (any quote inside a string is escaped).
var readVerbs = [][]byte{[]byte(`"verb":"get"`), []byte(`"verb":"list"`), []byte(`"verb":"watch"`)}

func isRead(line []byte) bool {
	for _, v := range readVerbs {
		if bytes.Contains(line, v) {
			return true
		}
	}
	return false
}
