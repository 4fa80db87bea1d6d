package testpg

import "testing"

// Database starts a throwaway server for the test and returns the DSN of a
// new database on it; the server stops when the test ends. It fails the test,
// never skips it, without PostgreSQL.
func Database(tb testing.TB) string {
	tb.Helper()
	pg, err := Start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = pg.Stop() })
	dsn, err := pg.NewDatabase()
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}
