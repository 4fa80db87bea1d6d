// Package ingesttest serves the devcluster API server's audit webhook in
// integration tests outside internal/ingest (whose own tests cannot import
// it: they are in package ingest, which this imports).
//
// Test-only: cmd/clusterdesk must not link it (internal/importrules).
package ingesttest

import (
	"context"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ingest"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
	"github.com/clusterdesk/clusterdesk/internal/testwait"
)

// ServeAuditWebhook serves a receiver of o (its Store, and Writes when set)
// at the devcluster's audit webhook address, trusting the API server's
// client CA, as the console does, until the test ends.
func ServeAuditWebhook(t *testing.T, o ingest.Options) {
	t.Helper()
	w := testcluster.RequireAuditWebhook(t)
	pem, err := os.ReadFile(w.ClientCAFile)
	if err != nil {
		t.Fatal(err)
	}
	o.Senders.ClientCAs = x509.NewCertPool()
	o.Senders.ClientCAs.AppendCertsFromPEM(pem)
	rc, err := ingest.NewReceiver(o)
	if err != nil {
		t.Fatal(err)
	}
	var srv *ingest.Server
	// Another test's listener may still be closing.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if srv, err = ingest.Listen(w.Listen, w.CertFile, w.KeyFile, rc, nil); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("listen on the devcluster's audit webhook address: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); testwait.Closed(t, done, testwait.Within, "the audit webhook to stop") })
}

// RecordingLedger is a fresh SQLite ledger of the test's own that records
// the devcluster's writes, as the console does: ServeAuditWebhook into it.
func RecordingLedger(t *testing.T) (ledger.Store, ledger.WriteStore) {
	t.Helper()
	st, err := ledger.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "ledger.db"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws := st.(ledger.WriteStore)
	ServeAuditWebhook(t, ingest.Options{Store: st, Writes: ws})
	return st, ws
}
