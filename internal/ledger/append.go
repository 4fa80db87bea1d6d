package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Append stores the entries in one transaction (appendBatch). When the
// database refuses that batch for an entry's data (dataError) rather than
// for being unavailable, it stores them again one by one in one transaction,
// each behind a savepoint, and stores an entry it still refuses as a
// placeholder saying so: one request's value never costs the other entries
// of its batch (other people's writes, in an API server's batch), and a
// batch retried by its sender never fails forever for it (issue 43).
func (s *sqlStore) Append(ctx context.Context, entries []Entry) (int, error) {
	if len(entries) == 0 {
		return 0, nil
	}
	args := make([][]any, len(entries))
	for i, e := range entries {
		a, err := entryArgs(e)
		if err != nil {
			return 0, err
		}
		args[i] = a
	}
	added, err := s.appendBatch(ctx, args)
	if err != nil && dataError(err) && ctx.Err() == nil {
		added, err = s.appendEach(ctx, entries, args)
	}
	if err == nil {
		s.appended(added) // the size bound (trim.go) counts the entries of either path
	}
	return added, err
}

// appendEach stores each entry behind a savepoint, a placeholder in place of
// one the database refuses for its data.
func (s *sqlStore) appendEach(ctx context.Context, entries []Entry, args [][]any) (added int, err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("ledger: append: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	insert := insertSQL(s.d, 1)
	for i, a := range args {
		n, err := insertSaved(ctx, tx, insert, a)
		for _, p := range placeholders(entries[i], err) {
			if err == nil || !dataError(err) {
				break
			}
			pa, perr := entryArgs(p)
			if perr != nil {
				return 0, perr
			}
			n, err = insertSaved(ctx, tx, insert, pa)
		}
		if err != nil {
			return 0, fmt.Errorf("ledger: append: %w", err)
		}
		added += n
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("ledger: append: commit: %w", err)
	}
	return added, nil
}

// insertSaved runs one entry's INSERT behind a savepoint, so that its
// failure leaves the transaction usable (PostgreSQL aborts the whole
// transaction on an error otherwise).
func insertSaved(ctx context.Context, tx *sql.Tx, insert string, args []any) (int, error) {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT ledger_entry"); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, insert, args...)
	if err != nil {
		if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT ledger_entry"); rerr != nil {
			return 0, fmt.Errorf("rollback to savepoint: %v (after %v)", rerr, err)
		}
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT ledger_entry"); err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// placeholders are what is stored in place of an entry the database refused
// for its data, tried in turn: the entry's who, what and outcome without its
// free texts, groups and object; then its identity, time and outcome only.
// Each says in Reason that the entry could not be stored and why.
func placeholders(e Entry, cause error) []Entry {
	if cause == nil {
		return nil
	}
	why := "clusterdesk could not store this entry as received (" + causeWords(cause) +
		"); the API server's audit log has the request"
	short := Entry{Source: e.Source, ID: e.ID, Time: e.Time, Code: e.Code, Result: e.Result, Reason: why}
	long := short
	long.User, long.Impersonator, long.Verb, long.Action = e.User, e.Impersonator, e.Verb, e.Action
	long.APIGroup, long.APIVersion, long.Resource, long.Subresource = e.APIGroup, e.APIVersion, e.Resource, e.Subresource
	long.Kind, long.Name, long.UID, long.Signer, long.DryRun, long.Policy = e.Kind, e.Name, e.UID, e.Signer, e.DryRun, e.Policy
	return []Entry{long, short}
}

// causeWords names the database's refusal without the refused value.
func causeWords(err error) string {
	if pg, ok := errors.AsType[*pgconn.PgError](err); ok {
		return "PostgreSQL " + pg.Code + ": " + pg.Message
	}
	if lite, ok := errors.AsType[*sqlite.Error](err); ok {
		return "SQLite " + sqlite.ErrorCodeString[lite.Code()]
	}
	return "refused"
}

// dataError tells whether the database refused a statement for the values
// it was given, which storing the entries one by one can isolate, rather
// than for being unreachable, overloaded or shutting down, which it cannot:
// PostgreSQL's classes 22 (data exception: encoding, range), 23 (integrity
// constraint) and 54 (program limit: an index row too big); SQLite's
// constraint, too big and mismatch results.
func dataError(err error) bool {
	if pg, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch pg.Code[:2] {
		case "22", "23", "54":
			return true
		}
		return false
	}
	if lite, ok := errors.AsType[*sqlite.Error](err); ok {
		switch lite.Code() & 0xff { // the primary result code of an extended one
		case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_MISMATCH:
			return true
		}
	}
	return false
}
