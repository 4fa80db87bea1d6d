package testfixtures

import (
	"context"
	"sync"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testpg"
)

// PostgresLedger is a ledger on a throwaway PostgreSQL (internal/testpg:
// fails, never skips, without PostgreSQL), both closed when the test ends,
// and the ledger's DSN. stop stops the server before that, for the tests of
// a database that goes away; the server is stopped once, whoever asks first.
func PostgresLedger(t testing.TB) (store ledger.Store, dsn string, stop func() error) {
	t.Helper()
	pg, err := testpg.Start()
	if err != nil {
		t.Fatal(err)
	}
	var (
		once    sync.Once
		stopErr error
	)
	stop = func() error {
		once.Do(func() { stopErr = pg.Stop() })
		return stopErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	})
	dsn, err = pg.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	store, err = ledger.Open(context.Background(), dsn, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store, dsn, stop
}
