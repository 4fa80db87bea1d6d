package ledger_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/testpg"
)

// TestMain starts one PostgreSQL for the test binary (initdb takes seconds)
// and adds it to the backends; each test gets a database of its own. The
// crash test's child (crashChild) runs instead when asked.
func TestMain(m *testing.M) {
	if dsn := os.Getenv(crashChildEnv); dsn != "" {
		crashChild(dsn)
		return
	}
	pg, err := testpg.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	backends = append(backends, backend{name: "postgres", dsn: func(t testing.TB) string {
		dsn, err := pg.NewDatabase()
		if err != nil {
			t.Fatal(err)
		}
		return dsn
	}})
	code := m.Run()
	if err := pg.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}
