package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/audit"
)

func TestAuditFlagsAndLogFile(t *testing.T) {
	var a auditConfig
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	a.register(fs)
	if a.log != "-" || !a.events || a.eventNamespace != "default" {
		t.Fatalf("defaults %+v", a)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := fs.Parse([]string{"--audit-log", path, "--audit-events=false"}); err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	trail, err := buildAudit(a, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	trail.start(context.Background())
	trail.recorder.Record(audit.Record{User: "alice", Verb: "delete", Kind: "CSIDriver", Name: "d"})
	if err := trail.close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(raw), `"user":"alice"`) || strings.Count(string(raw), "\n") != 1 {
		t.Fatalf("audit file %q, err %v", raw, err)
	}

	a.log = filepath.Join(t.TempDir(), "missing", "audit.jsonl")
	if _, err := buildAudit(a, cfg, log); err == nil || !strings.Contains(err.Error(), "--audit-log") {
		t.Fatalf("unwritable log: err %v", err)
	}
}
