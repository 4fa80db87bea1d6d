package ledger_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// backend names a fresh, empty database of one backend for one test.
type backend struct {
	name string
	dsn  func(t testing.TB) string
}

var sqliteBackend = backend{name: "sqlite", dsn: func(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "ledger.db")
}}

// backends are the backends every test of the suite runs on; TestMain adds
// PostgreSQL.
var backends = []backend{sqliteBackend}

// eachBackend runs the test on every backend, each with its own database.
func eachBackend(t *testing.T, test func(t *testing.T, dsn string)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { test(t, b.dsn(t)) })
	}
}

// open opens the ledger dsn names, closed at the end of the test.
func open(t testing.TB, dsn string, o ledger.Options) ledger.Store {
	t.Helper()
	s, err := ledger.Open(context.Background(), dsn, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
