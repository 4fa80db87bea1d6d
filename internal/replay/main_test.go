package replay

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/clusterdesk/clusterdesk/internal/testpg"
)

// pg is the PostgreSQL of BenchmarkReplay's postgres backend, started on
// first use (initdb takes seconds: the unit tests need none) and stopped
// by TestMain.
var pg struct {
	once sync.Once
	srv  *testpg.Server
	err  error
}

// pgDSN is a fresh database on the test binary's PostgreSQL.
func pgDSN(tb testing.TB) string {
	pg.once.Do(func() { pg.srv, pg.err = testpg.Start() })
	if pg.err != nil {
		tb.Fatal(pg.err)
	}
	dsn, err := pg.srv.NewDatabase()
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pg.srv != nil {
		if err := pg.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}
