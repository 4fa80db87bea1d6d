package testcluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// AuditWebhook is what a console needs to serve as the devcluster API
// server's audit webhook backend (ready.json's auditWebhook): the address the
// API server sends its batches to, the serving pair for 127.0.0.1 (from the
// CA the API server trusts), and the CA of the API server's client
// certificate.
type AuditWebhook struct {
	Listen       string `json:"listen"`
	CertFile     string `json:"certFile"`
	KeyFile      string `json:"keyFile"`
	ClientCAFile string `json:"clientCAFile"`
	// ClientCertFile and ClientKeyFile are the API server's client pair, for
	// tests that post batches as the API server would (pki/audit-client.*).
	ClientCertFile string `json:"-"`
	ClientKeyFile  string `json:"-"`
}

// RequireAuditWebhook returns the devcluster's audit webhook settings, or
// fails the test (never skips) when ready.json has none: a devcluster built
// before the audit webhook existed must be rebuilt (`make devcluster`).
func RequireAuditWebhook(t testing.TB) AuditWebhook {
	t.Helper()
	Require(t)
	dir := os.Getenv(EnvDir)
	raw, err := os.ReadFile(filepath.Join(dir, "ready.json"))
	if err != nil {
		t.Fatalf("devcluster ready.json: %v", err)
	}
	var s struct {
		AuditWebhook *AuditWebhook `json:"auditWebhook"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("devcluster ready.json: %v", err)
	}
	w := s.AuditWebhook
	if w == nil || w.Listen == "" || w.CertFile == "" || w.KeyFile == "" || w.ClientCAFile == "" {
		t.Fatalf("devcluster ready.json has no auditWebhook: the devcluster predates the audit webhook, rebuild it (make devcluster)")
	}
	w.ClientCertFile = filepath.Join(dir, "pki", "audit-client.crt")
	w.ClientKeyFile = filepath.Join(dir, "pki", "audit-client.key")
	return *w
}
