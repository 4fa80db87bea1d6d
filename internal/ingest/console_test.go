package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/audit"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

func TestConsoleEntry(t *testing.T) {
	now := time.Date(2026, 11, 28, 13, 0, 0, 0, time.FixedZone("X", 3600))
	for _, tc := range []struct {
		rec                                 audit.Record
		verb, sub, action, kind, group, res string
		code                                int
		reason                              string
	}{
		{audit.Record{ID: "a", Time: now, User: "alice", Verb: "approve", APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest", APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests", Name: "x", UID: "u", Reason: "ticket OPS-1", Signer: "example.com/x", Result: audit.ResultOK},
			"update", "approval", ledger.ActionApprove, "csrs", "certificates.k8s.io", "certificatesigningrequests", 200, "ticket OPS-1"},
		{audit.Record{ID: "b", Time: now, User: "bob", Verb: "deny", Kind: "CertificateSigningRequest", APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests", Name: "x", Reason: "unknown host", Result: audit.ResultDenied, Status: 403, Error: "forbidden"},
			"update", "approval", ledger.ActionDeny, "csrs", "certificates.k8s.io", "certificatesigningrequests", 403, "unknown host — forbidden"},
		{audit.Record{ID: "c", Time: now, User: "carol", Verb: "update", APIVersion: "flowcontrol.apiserver.k8s.io/v1", Kind: "FlowSchema", APIGroup: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas", Name: "fs", Result: audit.ResultOK, Diff: "-a\n+b\n"},
			"update", "", ledger.ActionUpdate, "flowschemas", "flowcontrol.apiserver.k8s.io", "flowschemas", 200, ""},
		{audit.Record{ID: "d", Time: now, User: "dan", Verb: "issue", Kind: "CertificateSigningRequest", APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests", Name: "x", Result: audit.ResultOK},
			"update", "status", ledger.ActionIssue, "csrs", "certificates.k8s.io", "certificatesigningrequests", 200, ""},
	} {
		e, ok := ConsoleEntry(tc.rec)
		if !ok || e.Source != ledger.SourceConsole || e.ID != tc.rec.ID || !e.Time.Equal(now) || e.Time.Location() != time.UTC ||
			e.Verb != tc.verb || e.Subresource != tc.sub || e.Action != tc.action || e.Kind != tc.kind ||
			e.APIGroup != tc.group || e.Resource != tc.res || e.Code != tc.code || e.Reason != tc.reason || e.Diff != tc.rec.Diff || e.Signer != tc.rec.Signer {
			t.Errorf("%s: %+v", tc.rec.ID, e)
		}
	}
}

// A record is mapped by its API group and resource, never by its kind's
// name: a custom resource whose CRD calls its kind CertificateSigningRequest
// is no CSR, and the ledger keeps no record of an object none of its pages
// show (a custom resource's, with its diff).
func TestConsoleEntryByGroupAndResource(t *testing.T) {
	for _, rec := range []audit.Record{
		{ID: "impostor", Verb: "update", Kind: "CertificateSigningRequest", APIGroup: "evil.example.com", Resource: "certificatesigningrequests",
			Name: "x", Result: audit.ResultOK, Diff: "-  password: a\n+  password: b\n"},
		{ID: "no-group", Verb: "update", Kind: "FlowSchema", Name: "fs", Result: audit.ResultOK},
	} {
		if e, ok := ConsoleEntry(rec); ok {
			t.Errorf("%s: stored as %+v", rec.ID, e)
		}
	}
	e, ok := ConsoleEntry(audit.Record{ID: "named-otherwise", Verb: "create", Kind: "Widget", APIGroup: "storage.k8s.io", Resource: "csidrivers", Name: "d", Result: audit.ResultOK})
	if !ok || e.Kind != "csidrivers" || e.APIGroup != "storage.k8s.io" || e.Resource != "csidrivers" {
		t.Errorf("a CSIDriver's record: %+v, %v", e, ok)
	}
}

// Records never wait for the ledger: a full queue drops and counts; a
// failing ledger is retried, and what was queued arrives once it is back.
func TestConsoleFeedDropsWhenFullAndRetries(t *testing.T) {
	store := newMemStore()
	store.setDown(true)
	f := NewConsoleFeed(store, 2, nil)
	for _, id := range []string{"1", "2", "3"} {
		f.Record(audit.Record{ID: id, Verb: "create", Kind: "CSIDriver", APIGroup: "storage.k8s.io", Resource: "csidrivers", Result: audit.ResultOK})
	}
	if f.Dropped() != 1 {
		t.Fatalf("dropped %d, want 1", f.Dropped())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for f.Failed() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	store.setDown(false)
	for f.Stored() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if got := len(store.all()); got != 2 || f.Failed() == 0 {
		t.Errorf("stored %d, failed %d; want 2 stored after a failure", got, f.Failed())
	}
}

// A batch the ledger keeps refusing while the database answers is given up
// after a few tries, counted and logged, and the records behind it are
// stored: one record can no longer stop the console's records for good
// (issue 43).
func TestConsoleFeedDiscardsABatchRefusedWhileTheDatabaseAnswers(t *testing.T) {
	store := newMemStore()
	store.refuse = func(e ledger.Entry) bool { return e.Name == "poison" }
	f := NewConsoleFeed(store, 0, nil)
	f.firstBackoff = time.Millisecond
	f.Record(audit.Record{ID: "poison", Verb: "approve", Kind: "CertificateSigningRequest", APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests", Name: "poison", Result: audit.ResultOK})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(30 * time.Second)
	for f.Discarded() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	f.Record(audit.Record{ID: "later", Verb: "approve", Kind: "CertificateSigningRequest", APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests", Name: "csr-2", Result: audit.ResultOK})
	for f.Stored() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := store.all(); len(got) != 1 || got[0].ID != "later" || f.Discarded() != 1 || f.Failed() != consoleAttempts {
		t.Errorf("stored %v, discarded %d, failed %d; want the later record, 1 discarded after %d failures", got, f.Discarded(), f.Failed(), consoleAttempts)
	}
}
