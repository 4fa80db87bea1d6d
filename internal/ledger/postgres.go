package ledger

import (
	"context"
	"database/sql"
	"fmt"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// postgresConns bounds the pool of one console: its appends (one at a time
// from the audit webhook), pages and exports.
const postgresConns = 8

func openPostgres(ctx context.Context, dsn string, o Options) (Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("ledger: postgres %s: %w", RedactDSN(dsn), err)
	}
	db.SetMaxOpenConns(postgresConns)
	db.SetMaxIdleConns(postgresConns)
	if err := migrate(ctx, db, postgresDialect); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w (postgres %s)", err, RedactDSN(dsn))
	}
	return newSQLStore(postgresDialect, db, db, o), nil
}

// countPostgres counts the entries: the planner's estimate (pg_class, kept by
// autovacuum and ANALYZE, so it lags a bulk load until autovacuum analyzes)
// once the table is past 100,000 rows, where an exact count(*) costs more
// than a page (0.8 s at 1,000,000); exact below.
func countPostgres(ctx context.Context, db *sql.DB) (int64, error) {
	var estimate float64
	err := db.QueryRowContext(ctx, "SELECT reltuples FROM pg_class WHERE oid = 'ledger_entries'::regclass").Scan(&estimate)
	if err != nil {
		return 0, err
	}
	if estimate >= 100_000 {
		return int64(estimate), nil
	}
	var n int64
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM ledger_entries").Scan(&n)
	return n, err
}
