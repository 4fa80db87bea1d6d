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
	if _, err := p.Up(ctx); err != nil {
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
