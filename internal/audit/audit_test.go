package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var csrGR = schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}

func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		name        string
		err         error
		result      string
		status      int
		reason      string
		msgContains string
	}{
		{"ok", nil, ResultOK, 0, "", ""},
		{"forbidden", apierrors.NewForbidden(csrGR, "x", errors.New("no")), ResultDenied, 403, "Forbidden", "forbidden"},
		{"conflict", apierrors.NewConflict(csrGR, "x", errors.New("changed")), ResultFailed, 409, "Conflict", "changed"},
		{"plain error", errors.New("connection refused"), ResultFailed, 0, "", "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			result, status, reason, msg := Outcome(tc.err)
			if result != tc.result || status != tc.status || reason != tc.reason || !strings.Contains(msg, tc.msgContains) {
				t.Fatalf("Outcome = %q %d %q %q", result, status, reason, msg)
			}
		})
	}
}

func TestObjectTextScrubsPEMAndBookkeeping(t *testing.T) {
	pem := "-----BEGIN CERTIFICATE REQUEST-----\nMIIBsecretish\n-----END CERTIFICATE REQUEST-----\n"
	csr := &certificatesv1.CertificateSigningRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		ObjectMeta: metav1.ObjectMeta{Name: "c1", ResourceVersion: "42",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			Annotations:   map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{"request":"` + pem + `"}}`, "team": "a"}},
		Spec:   certificatesv1.CertificateSigningRequestSpec{Request: []byte(pem), SignerName: "example.com/x"},
		Status: certificatesv1.CertificateSigningRequestStatus{Certificate: []byte("-----BEGIN CERTIFICATE-----\nabc\n")},
	}
	text, err := ObjectText(csr)
	if err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{"MIIB", "BEGIN", "managedFields", "resourceVersion", "kubectl\n", "LS0t"} {
		if strings.Contains(text, banned) {
			t.Errorf("text contains %q:\n%s", banned, text)
		}
	}
	for _, want := range []string{"signerName: example.com/x", "team: a", "sha256:", "name: c1"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if csr.ResourceVersion != "42" || len(csr.ManagedFields) != 1 {
		t.Errorf("ObjectText changed its argument")
	}
}

func TestObjectTextWebhookCABundleAndNil(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
		"metadata": map[string]any{"name": "w"},
		"webhooks": []any{map[string]any{"name": "a.example.com", "clientConfig": map[string]any{"caBundle": "LS0tLS1CRUdJTiBDRVJU"}}},
	}}
	text, err := ObjectText(u)
	if err != nil || strings.Contains(text, "LS0tLS1CRUdJTiBDRVJU") || !strings.Contains(text, "caBundle: <20 bytes, sha256:") {
		t.Fatalf("err %v text:\n%s", err, text)
	}
	var nilU *unstructured.Unstructured
	if text, err := ObjectText(nilU); err != nil || text != "" {
		t.Fatalf("typed nil: %q %v", text, err)
	}
}

func TestDiffIsUnifiedAndBounded(t *testing.T) {
	d, cut := Diff("a: 1\nb: 2\n", "a: 1\nb: 3\n")
	if cut || !strings.Contains(d, "-b: 2") || !strings.Contains(d, "+b: 3") {
		t.Fatalf("diff %q cut %v", d, cut)
	}
	// An unchanged line stays context, however the edit lines up.
	d, _ = Diff("m:\n  c: \"x\"\n  n: n\n", "m:\n  c: \"x\"\n  l:\n    e: r\n  n: n\n")
	if strings.Contains(d, "-  c:") || !strings.Contains(d, "+  l:") {
		t.Fatalf("non-minimal diff:\n%s", d)
	}
	if d, _ := Diff("same\n", "same\n"); d != "" {
		t.Fatalf("equal texts: %q", d)
	}
	big := strings.Repeat("line of text that is long enough\n", 5000)
	d, cut = Diff("", big)
	if !cut || len(d) > MaxDiff || !strings.HasSuffix(d, "\n") {
		t.Fatalf("big diff: cut %v len %d", cut, len(d))
	}
}

func TestScrubText(t *testing.T) {
	jwt := "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJlLXBhcnQ"
	for in, want := range map[string]string{
		"approved, token " + jwt + " ok":         "approved, token <redacted> ok",
		"Authorization: Bearer abcdefgh12345678": "Authorization: <redacted>",
		"plain reason":                           "plain reason",
	} {
		if got := ScrubText(in); got != want {
			t.Errorf("ScrubText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEventFor(t *testing.T) {
	base := Record{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), User: "alice", Verb: "approve",
		APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest", Name: "c1", UID: "u1",
		Reason: "known node", RVBefore: "10", RVAfter: "11", Result: ResultOK}
	ev := EventFor(base, "team-ns")
	if ev.Namespace != "default" || ev.Type != "Normal" || ev.Reason != "ClusterdeskApprove" || ev.Action != "Approve" ||
		ev.Regarding.UID != "u1" || ev.Regarding.Kind != "CertificateSigningRequest" {
		t.Fatalf("event %+v", ev)
	}
	for _, want := range []string{"alice approved CertificateSigningRequest c1", "10 → 11", "reason: known node"} {
		if !strings.Contains(ev.Note, want) {
			t.Errorf("note %q lacks %q", ev.Note, want)
		}
	}
	denied := base
	denied.Verb, denied.DryRun, denied.Result, denied.ErrorReason, denied.Error = "update", true, ResultDenied, "Forbidden", "nope"
	ev = EventFor(denied, "kube-system")
	if ev.Namespace != "kube-system" || ev.Type != "Warning" || ev.Reason != "ClusterdeskUpdateDenied" || ev.Action != "DryRunUpdate" ||
		!strings.Contains(ev.Note, "alice tried to update CertificateSigningRequest c1 via clusterdesk (dry run): denied (Forbidden)") {
		t.Fatalf("event %+v", ev)
	}
	dry := base
	dry.Verb, dry.DryRun = "delete", true
	if n := EventFor(dry, "").Note; !strings.HasPrefix(n, "alice dry-ran delete of CertificateSigningRequest c1 via clusterdesk (dry run): ok") {
		t.Fatalf("dry-run note %q", n)
	}
	force := base
	force.Verb, force.Kind = "apply-force", "FlowSchema"
	if ev := EventFor(force, ""); ev.Reason != "ClusterdeskApplyForce" || ev.Action != "ApplyForce" || !strings.HasPrefix(ev.Note, "alice force-applied FlowSchema c1") {
		t.Fatalf("force apply event %+v", ev)
	}
	long := base
	long.Reason = strings.Repeat("é", 2000)
	if n := EventFor(long, "").Note; len(n) > maxNote || !strings.HasSuffix(n, "…") {
		t.Fatalf("note of %d bytes", len(n))
	}
}

func TestEventNamespace(t *testing.T) {
	for _, tc := range []struct{ configured, obj, want string }{
		{"default", "", "default"}, {"kube-system", "", "kube-system"}, {"tools", "", "default"}, {"tools", "apps", "apps"}, {"", "", "default"},
	} {
		if got := EventNamespace(tc.configured, tc.obj); got != tc.want {
			t.Errorf("EventNamespace(%q, %q) = %q, want %q", tc.configured, tc.obj, got, tc.want)
		}
	}
}

type fakeEvents struct {
	mu  sync.Mutex
	got []Event
	err error
}

func (f *fakeEvents) WriteEvent(_ context.Context, ev Event) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, ev)
	return f.err
}

func (f *fakeEvents) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.got)
}

func TestRecorderWritesLinesEventsAndObservers(t *testing.T) {
	var buf bytes.Buffer
	events := &fakeEvents{}
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.FixedZone("X", 3600))
	r := New(Options{Lines: &buf, Events: events, EventNamespace: "default", Now: func() time.Time { return now }})
	var observed []Record
	r.OnRecord(func(rec Record) { observed = append(observed, rec) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()

	rec := Record{User: "bob", Verb: "update", Kind: "FlowSchema", Name: "fs", Reason: "see Bearer abcdefghijklmnop"}
	rec.Finish(apierrors.NewForbidden(schema.GroupResource{Resource: "flowschemas"}, "fs", errors.New("rbac")))
	r.Record(rec)

	var line map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &line); err != nil {
		t.Fatalf("not one JSON line: %q: %v", buf.String(), err)
	}
	if line["user"] != "bob" || line["result"] != ResultDenied || line["status"] != float64(403) ||
		line["time"] != "2026-05-06T06:08:09Z" || line["dryRun"] != false {
		t.Fatalf("line %v", line)
	}
	if strings.Contains(buf.String(), "abcdefghijklmnop") {
		t.Fatalf("token-like text reached the line: %s", buf.String())
	}
	if len(observed) != 1 || observed[0].Result != ResultDenied {
		t.Fatalf("observed %+v", observed)
	}
	// The record's ID (the ledger's key) is in the line and what observers see.
	if id, _ := line["id"].(string); len(id) != 32 || observed[0].ID != id {
		t.Fatalf("line id %q, observed id %q", line["id"], observed[0].ID)
	}
	deadline := time.Now().Add(10 * time.Second)
	for events.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if events.count() != 1 || events.got[0].Type != "Warning" {
		t.Fatalf("events %+v", events.got)
	}
	cancel()
	<-done
}

func TestRecorderDropsEventsWhenQueueFull(t *testing.T) {
	r := New(Options{Events: &fakeEvents{}, Queue: 2})
	for range 5 {
		r.Record(Record{Verb: "delete", Kind: "CSIDriver", Name: "d"})
	}
	if r.Dropped() != 3 {
		t.Fatalf("dropped %d, want 3 (queue of 2, nothing draining it)", r.Dropped())
	}
	var nilRecorder *Recorder
	nilRecorder.Record(Record{}) // must not panic
}

func TestRecorderDrainsQueuedEventsAtShutdown(t *testing.T) {
	events := &fakeEvents{}
	r := New(Options{Events: events})
	for range 3 {
		r.Record(Record{Verb: "create", Kind: "CSIDriver", Name: "d"})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // already shut down: Run only drains
	r.Run(ctx)
	if events.count() != 3 {
		t.Fatalf("%d of 3 queued Events written at shutdown", events.count())
	}
}

// TestRecorderKeepsHalfTheQueueForWrites is the flood of refusals: a hundred
// refused attempts (nothing written) take at most half of the Event queue,
// so the Events of the writes that follow are all queued; a write's Event
// dropped once the queue is full is counted and logged by name.
func TestRecorderKeepsHalfTheQueueForWrites(t *testing.T) {
	var logged bytes.Buffer
	r := New(Options{Events: &fakeEvents{}, Queue: 8, Log: slog.New(slog.NewTextHandler(&logged, nil))})
	for range 100 {
		r.Record(Record{Verb: "approve", Kind: "CertificateSigningRequest", Name: "made-up", Result: ResultFailed})
	}
	r.Record(Record{Verb: "delete", Kind: "CSIDriver", Name: "dry", DryRun: true})
	if got := r.DroppedAttempts(); got != 97 {
		t.Errorf("dropped %d Events of attempts, want 97 (4 fit in half the queue of 8)", got)
	}
	for i := range 4 {
		r.Record(Record{Verb: "delete", Kind: "CSIDriver", Name: fmt.Sprintf("written-%d", i)})
	}
	if got := r.DroppedWrites(); got != 0 {
		t.Fatalf("dropped %d Events of writes after a flood of refusals, want 0", got)
	}
	r.Record(Record{Verb: "delete", Kind: "CSIDriver", Name: "one-too-many", User: "alice"})
	if got := r.DroppedWrites(); got != 1 || r.Dropped() != 98 {
		t.Errorf("a write with the queue full: dropped writes %d (want 1), all %d (want 98)", got, r.Dropped())
	}
	if !strings.Contains(logged.String(), "name=one-too-many") || !strings.Contains(logged.String(), "level=ERROR") {
		t.Errorf("the dropped write's Event is not logged by name at error level: %s", logged.String())
	}
}
