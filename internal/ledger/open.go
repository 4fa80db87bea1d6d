package ledger

// The libraries, and why each:
//
//   - modernc.org/sqlite, the embedded default: SQLite translated to pure Go,
//     so the console builds without cgo (the distroless image, `make run`)
//     and needs no server; SQLite's WAL gives one writer and many readers in
//     one file, and a commit survives a crash of the process.
//   - github.com/jackc/pgx/v5, for replicas sharing one ledger: the
//     maintained PostgreSQL driver, used through its database/sql driver
//     (stdlib) so that one SQL layer (sqlstore.go) serves both backends; the
//     store's queries are plain SQL with nothing pgx's native API would
//     make faster enough to carry a second implementation.
//   - github.com/pressly/goose/v3, the migrations: versioned SQL files
//     embedded in the binary (migrations/), run at start with dialects for
//     both backends, a library call rather than a CLI, and a PostgreSQL
//     session lock so that replicas starting together migrate once. It pulls
//     in fewer modules than golang-migrate, whose drivers bring their own
//     database libraries.

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Options configure a ledger.
type Options struct {
	// Retention is how long entries are kept; 0 keeps them forever. The store
	// reports it (Stats); whoever runs the console calls Prune with it.
	Retention time.Duration
	// MaxEntries bounds the ledger by size: past it, the oldest entries are
	// pruned (in the background, after Appends; trim.go says why entries
	// and not bytes). 0: no bound.
	MaxEntries int64
	// WriteRetention is how long recorded writes (writes.go) are kept; 0
	// keeps them forever. Whoever runs the console calls PruneWrites with it.
	WriteRetention time.Duration
	// MaxWrites bounds the recorded writes by count (0: none).
	MaxWrites int64
	// TrafficRetention is how long the recorded traffic (traffic.go) is
	// kept; 0 keeps it forever. Whoever runs the console calls
	// PruneTraffic with it (and CoarsenTraffic).
	TrafficRetention time.Duration
	// MaxTrafficBuckets bounds the traffic by buckets (0: none).
	MaxTrafficBuckets int64
}

// Open opens the ledger that dsn names and brings its schema up to date:
//
//   - "sqlite:<path>" or a bare path: a SQLite file, created when missing;
//   - "postgres://…" or "postgresql://…": a PostgreSQL database (a pool).
//
// It refuses a database whose schema is newer than this binary knows.
func Open(ctx context.Context, dsn string, o Options) (Store, error) {
	if o.Retention < 0 {
		return nil, fmt.Errorf("ledger: negative retention %s", o.Retention)
	}
	if o.WriteRetention < 0 || o.MaxWrites < 0 || o.TrafficRetention < 0 || o.MaxTrafficBuckets < 0 {
		return nil, fmt.Errorf("ledger: negative bound of recorded writes or traffic")
	}
	if o.MaxEntries < 0 {
		return nil, fmt.Errorf("ledger: negative entry bound %d", o.MaxEntries)
	}
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return openPostgres(ctx, dsn, o)
	case strings.HasPrefix(dsn, "sqlite:"):
		return openSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"), o)
	case dsn == "":
		return nil, fmt.Errorf("ledger: no database named")
	case strings.Contains(dsn, "://"):
		return nil, fmt.Errorf("ledger: unknown database %q (sqlite:<path> or postgres://…)", RedactDSN(dsn))
	default:
		return openSQLite(ctx, dsn, o)
	}
}

// RedactDSN drops the password of a URL-shaped dsn before it reaches an
// error or a log line.
func RedactDSN(dsn string) string {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return dsn
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		return scheme + "://…@" + rest[at+1:]
	}
	return dsn
}
