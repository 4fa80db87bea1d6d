package ledger_test

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// rawDB opens the database of dsn without the store, for what only a test
// does to it: pretend a newer binary migrated it.
func rawDB(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	driver, name := "pgx", dsn
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		driver, name = "sqlite", path
	}
	db, err := sql.Open(driver, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestMigrationsRunOnceAndRefuseANewerSchema(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s, err := ledger.Open(ctx, dsn, ledger.Options{})
		if err != nil {
			t.Fatal(err)
		}
		appendAll(t, s, entry("kept", 0))
		s.Close()
		// A second start migrates nothing and keeps what is stored.
		s = open(t, dsn, ledger.Options{})
		if p := query(t, s, ledger.Query{}); len(p.Entries) != 1 {
			t.Fatalf("after a second Open: %v", ids(p.Entries))
		}
		s.Close()

		// A newer binary's migration.
		db := rawDB(t, dsn)
		if _, err := db.ExecContext(ctx, "INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)"); err != nil {
			t.Fatal(err)
		}
		_, err = ledger.Open(ctx, dsn, ledger.Options{})
		if err == nil || !strings.Contains(err.Error(), "newer than this binary knows") {
			t.Errorf("Open of a newer schema: %v", err)
		}
	})
}

func TestNegativeRetentionAndUnknownDatabasesAreRefused(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		dsn string
		o   ledger.Options
	}{
		{"sqlite:" + t.TempDir() + "/l.db", ledger.Options{Retention: -time.Hour}},
		{"", ledger.Options{}},
		{"sqlite:", ledger.Options{}},
		{"mysql://u:secret@h/db", ledger.Options{}},
	} {
		s, err := ledger.Open(ctx, c.dsn, c.o)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q, %+v) succeeded", c.dsn, c.o)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q): the error shows the password: %v", c.dsn, err)
		}
	}
}

// The two dialects' migrations are the same versions, file for file.
func TestDialectsHaveTheSameMigrations(t *testing.T) {
	names := func(dir string) []string {
		entries, err := fs.ReadDir(os.DirFS("migrations"), dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	if diff := cmp.Diff(names("sqlite"), names("postgres")); diff != "" {
		t.Errorf("migrations (-sqlite +postgres):\n%s", diff)
	}
}

func TestSQLiteFileSurvivesReopen(t *testing.T) {
	// A bare path is a SQLite file too.
	path := t.TempDir() + "/ledger.db"
	s, err := ledger.Open(context.Background(), path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	appendAll(t, s, entry("a", 0), entry("b", 1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, "sqlite:"+path, ledger.Options{})
	if diff := cmp.Diff([]string{"b", "a"}, ids(query(t, s, ledger.Query{}).Entries)); diff != "" {
		t.Errorf("after reopen (-want +got):\n%s", diff)
	}
}

// Consoles started together on one new SQLite file (the browser tests start
// three on one state directory) each find it unmigrated; the file's write
// lock serialises their migrations and the later ones found the tables made
// ("table ledger_entries already exists": a console failed to start in a
// clean-clone CI run). Each must open it, the schema made once.
func TestSQLiteOpenedByConsolesStartedTogether(t *testing.T) {
	for round := range 5 {
		dsn := "sqlite:" + t.TempDir() + "/ledger.db"
		const consoles = 4
		errs := make(chan error, consoles)
		start := make(chan struct{})
		for range consoles {
			go func() {
				<-start
				s, err := ledger.Open(context.Background(), dsn, ledger.Options{})
				if err == nil {
					err = s.Close()
				}
				errs <- err
			}()
		}
		close(start)
		for range consoles {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: a console did not open the file the others opened with it: %v", round, err)
			}
		}
	}
}
