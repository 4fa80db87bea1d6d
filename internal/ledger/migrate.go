package ledger

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// The schema: one migration set per dialect, the same versions in each (a test
// holds them in step); each file differs from its twin only where the
// dialects spell a type differently.
//
//go:embed migrations
var migrations embed.FS

// migrate runs the migrations the database lacks and refuses a database that
// a newer binary migrated further than this one knows.
func migrate(ctx context.Context, db *sql.DB, d dialect) error {
	dir, err := fs.Sub(migrations, "migrations/"+d.name)
	if err != nil {
		return err
	}
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	if d.name == postgresName {
		// Replicas starting together: one migrates, the others wait.
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(d.goose, db, dir, opts...)
	if err != nil {
		return fmt.Errorf("ledger: migrations: %w", err)
	}
	// Up first: it creates goose's version table in a new database and applies
	// nothing to a newer one (its versions are all past ours).
	if err := up(ctx, p, d); err != nil {
		return fmt.Errorf("ledger: migrating the schema: %w", err)
	}
	current, target, err := p.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("ledger: schema version: %w", err)
	}
	if current > target {
		return fmt.Errorf("ledger: the database's schema is version %d, newer than this binary knows (%d): run a newer clusterdesk", current, target)
	}
	return nil
}

// sqliteMigrateAttempts is how often a SQLite file's migrations are asked
// for (up).
const sqliteMigrateAttempts = 3

// up applies the migrations p lacks. PostgreSQL's replicas take goose's
// session lock first. SQLite has none: consoles started together on one new
// file (the browser tests start three on one state directory) each find it
// unmigrated, the file's write lock serialises their migrations, and the
// later ones fail on the tables the first made ("table ... already exists";
// SQLite rolls the failed migration back, DDL being transactional there).
// Asked again, such a console finds the schema migrated and has nothing to
// do; an error that is not that race fails every attempt and is returned.
func up(ctx context.Context, p *goose.Provider, d dialect) error {
	var err error
	for range sqliteMigrateAttempts {
		if _, err = p.Up(ctx); err == nil || d.name == postgresName {
			return err
		}
	}
	return err
}
