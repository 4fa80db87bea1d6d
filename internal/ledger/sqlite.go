package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
)

// sqliteReaders is the read pool's size: pages and exports of a few auditors
// at once; each reader is cheap in WAL mode.
const sqliteReaders = 4

// sqlitePragmas apply to every connection. WAL: readers and the writer do not
// block each other; synchronous=NORMAL: a commit is in the WAL before Append
// returns, which survives a crash of the process (not of the machine's power,
// which would need FULL and an fsync per commit); busy_timeout: a second
// process (a second console on the same file) waits instead of failing.
var sqlitePragmas = []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(NORMAL)", "cache_size(-16000)"}

func openSQLite(ctx context.Context, path string, o Options) (Store, error) {
	if path == "" {
		return nil, fmt.Errorf("ledger: sqlite: no file named")
	}
	w, err := sql.Open("sqlite", sqliteDSN(path, true))
	if err != nil {
		return nil, fmt.Errorf("ledger: sqlite %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	if err := migrate(ctx, w, sqliteDialect); err != nil {
		w.Close()
		return nil, fmt.Errorf("%w (sqlite %s)", err, path)
	}
	r, err := sql.Open("sqlite", sqliteDSN(path, false))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("ledger: sqlite %s: %w", path, err)
	}
	r.SetMaxOpenConns(sqliteReaders)
	r.SetMaxIdleConns(sqliteReaders)
	return newSQLStore(sqliteDialect, w, r, o), nil
}

// sqliteDSN is the driver's name for the file: the writer's transactions take
// the write lock at BEGIN (no deadlock upgrading a read lock); the readers'
// connections refuse writes.
func sqliteDSN(path string, writer bool) string {
	v := url.Values{}
	for _, p := range sqlitePragmas {
		v.Add("_pragma", p)
	}
	if writer {
		v.Set("_txlock", "immediate")
	} else {
		v.Add("_pragma", "query_only(1)")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + v.Encode()
}
