package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// sqlStore is the Store of both backends over database/sql: the SQL is
// written once, the dialect binds its parameters.
type sqlStore struct {
	d dialect
	// w takes the writes and r the reads. SQLite: two pools of one file, w
	// with one connection (SQLite has one writer; queueing in database/sql
	// beats failing on a busy lock) and r with several (WAL readers never
	// block the writer, so an Export streaming to a slow client holds up no
	// Append). PostgreSQL: one pool, both.
	w, r      *sql.DB
	retention time.Duration
	// trim enforces Options.MaxEntries (trim.go); nil: no bound.
	trim *trimmer
	// exportSlots holds a token per export page query running (exportConns).
	exportSlots chan struct{}
	// insertChunk is "INSERT … VALUES (…), … ON CONFLICT DO NOTHING" of
	// insertRows entries.
	insertChunk string
	// The recorded writes' bounds and counters (writes_sql.go).
	writeRetention time.Duration
	maxWrites      int64
	wc             writeCounters
	// The recorded traffic's bounds and counters (traffic_sql.go).
	trafficRetention  time.Duration
	maxTrafficBuckets int64
	tc                trafficCounters
	// pruneChunk bounds one delete transaction of Prune, the trim and the
	// writes' prune (defaultPruneChunk; a test lowers it).
	pruneChunk int64
}

// insertRows is how many entries one INSERT carries: one statement per 100
// rows instead of per row (a round trip to PostgreSQL, a statement of
// SQLite's VM), well inside both backends' bound on parameters (2,500 of
// SQLite's 32,766 and PostgreSQL's 65,535).
const insertRows = 100

// insertSQL is the INSERT of n entries.
func insertSQL(d dialect, n int) string {
	values := strings.TrimSuffix(strings.Repeat(placeholder+", ", n), ", ")
	return d.bind("INSERT INTO ledger_entries (" + columnList + ") VALUES " + values + " ON CONFLICT (source, id) DO NOTHING")
}

func newSQLStore(d dialect, w, r *sql.DB, o Options) *sqlStore {
	s := &sqlStore{
		d: d, w: w, r: r, retention: o.Retention, exportSlots: make(chan struct{}, exportConns),
		insertChunk: insertSQL(d, insertRows), writeRetention: o.WriteRetention, maxWrites: o.MaxWrites,
		trafficRetention: o.TrafficRetention, maxTrafficBuckets: o.MaxTrafficBuckets,
		pruneChunk: defaultPruneChunk,
	}
	if o.MaxEntries > 0 {
		s.trim = newTrimmer(o.MaxEntries)
	}
	return s
}

// appendBatch stores the entries' args in one transaction; the conflict
// clause skips an entry already stored, and rows affected counts the new ones.
func (s *sqlStore) appendBatch(ctx context.Context, args [][]any) (added int, err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("ledger: append: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	for start := 0; start < len(args); start += insertRows {
		chunk := args[start:min(start+insertRows, len(args))]
		query := s.insertChunk
		if len(chunk) < insertRows {
			query = insertSQL(s.d, len(chunk))
		}
		values := make([]any, 0, len(chunk)*len(columns))
		for _, a := range chunk {
			values = append(values, a...)
		}
		// Rows affected counts the inserted rows, not the conflicts (also
		// within the statement: an entry twice in one batch is one row).
		res, err := tx.ExecContext(ctx, query, values...)
		if err != nil {
			return 0, fmt.Errorf("ledger: append: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("ledger: append: %w", err)
		}
		added += int(n)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("ledger: append: commit: %w", err)
	}
	return added, nil
}

// Query reads one page by keyset: limit+1 rows tell whether there is another.
func (s *sqlStore) Query(ctx context.Context, q Query) (Page, error) {
	limit := q.Limit
	switch {
	case limit <= 0:
		limit = DefaultLimit
	case limit > MaxLimit:
		limit = MaxLimit
	}
	var after *cursor
	if q.After != "" {
		c, err := decodeCursor(q.After, q.Oldest)
		if err != nil {
			return Page{}, err
		}
		after = &c
	}
	sel := selectFor(s.d, q, after)
	if sel.none {
		return Page{}, nil
	}
	query, args := sel.sql(limit + 1)
	rows, err := s.r.QueryContext(ctx, s.d.bind(query), args...)
	if err != nil {
		return Page{}, fmt.Errorf("ledger: query: %w", err)
	}
	defer rows.Close()
	var (
		page Page
		last cursor
	)
	for rows.Next() {
		e, seq, err := scanEntry(rows)
		if err != nil {
			return Page{}, fmt.Errorf("ledger: query: %w", err)
		}
		if len(page.Entries) == limit {
			page.Next = last.encode()
			break
		}
		page.Entries = append(page.Entries, e)
		last = cursor{oldest: q.Oldest, timeNS: e.Time.UnixNano(), seq: seq}
	}
	if err := rows.Err(); err != nil {
		return Page{}, fmt.Errorf("ledger: query: %w", err)
	}
	return page, nil
}

// exportPage is how many rows one of an export's queries reads (Query's
// keyset paging): the rows are read, the connection given back, and only
// then handed to each, so an export to a client that stops reading holds no
// connection, no transaction and no read snapshot while it waits. 100 rows
// bound what a page holds in memory (25 MiB were every row a MaxObjectBytes
// object; a few hundred KiB for ordinary ones) and cost a query of 100 rows on
// an index, so a million-row export is 10,000 short queries.
const exportPage = 100

// exportConns is the connection budget of every export of one store: at
// most this many of their page queries run at once, whatever the number of
// exports, so exports never take the connections Append (the audit
// webhook), the pages' Query and Ping need (PostgreSQL's pool of
// postgresConns, SQLite's sqliteReaders).
const exportConns = 2

// Export streams every selected entry to each, a keyset page at a time.
// Entries appended while it runs after its position are not in it (newest
// first: they sort before the page it reached); none is read twice.
func (s *sqlStore) Export(ctx context.Context, q Query, each func(Entry) error) error {
	q.After, q.Limit = "", exportPage
	for {
		page, err := s.exportPage(ctx, q)
		if err != nil {
			return err // Query's errors name the ledger already
		}
		for _, e := range page.Entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := each(e); err != nil {
				return err
			}
		}
		if page.Next == "" {
			return ctx.Err()
		}
		q.After = page.Next
	}
}

// exportPage reads one page within the exports' connection budget.
func (s *sqlStore) exportPage(ctx context.Context, q Query) (Page, error) {
	select {
	case s.exportSlots <- struct{}{}:
	case <-ctx.Done():
		return Page{}, ctx.Err()
	}
	defer func() { <-s.exportSlots }()
	return s.Query(ctx, q)
}

// defaultPruneChunk bounds one prune transaction: a million old rows go in
// many short transactions, so Appends interleave and no transaction grows huge.
const defaultPruneChunk = 5000

// Prune deletes the entries older than before, oldest first, in chunks.
func (s *sqlStore) Prune(ctx context.Context, before time.Time) (int64, error) {
	del := s.d.bind("DELETE FROM ledger_entries WHERE seq IN (SELECT seq FROM ledger_entries WHERE time_ns < ? ORDER BY time_ns LIMIT ?)")
	var total int64
	for {
		res, err := s.w.ExecContext(ctx, del, before.UnixNano(), s.pruneChunk)
		if err != nil {
			return total, fmt.Errorf("ledger: prune: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("ledger: prune: %w", err)
		}
		total += n
		if n < s.pruneChunk {
			return total, nil
		}
	}
}

// Stats counts the entries and finds the oldest and newest. The count is
// exact on SQLite; on PostgreSQL it is the planner's estimate once the table
// is large (see countPostgres): an exact count(*) reads the whole table.
func (s *sqlStore) Stats(ctx context.Context) (Stats, error) {
	st := Stats{Backend: s.d.name, Retention: s.retention, PrunedForSize: s.PrunedForSize()}
	if s.trim != nil {
		st.MaxEntries = s.trim.max
	}
	var err error
	if s.d.name == postgresName {
		st.Entries, err = countPostgres(ctx, s.r)
	} else {
		err = s.r.QueryRowContext(ctx, "SELECT count(*) FROM ledger_entries").Scan(&st.Entries)
	}
	if err != nil {
		return Stats{}, fmt.Errorf("ledger: stats: %w", err)
	}
	var oldest, newest sql.NullInt64
	err = s.r.QueryRowContext(ctx, "SELECT (SELECT min(time_ns) FROM ledger_entries), (SELECT max(time_ns) FROM ledger_entries)").Scan(&oldest, &newest)
	if err != nil {
		return Stats{}, fmt.Errorf("ledger: stats: %w", err)
	}
	if oldest.Valid {
		st.Oldest = time.Unix(0, oldest.Int64).UTC()
	}
	if newest.Valid {
		st.Newest = time.Unix(0, newest.Int64).UTC()
	}
	return st, nil
}

func (s *sqlStore) Ping(ctx context.Context) error {
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("ledger: %s: %w", s.d.name, err)
	}
	return nil
}

func (s *sqlStore) Close() error {
	s.closeTrim()
	err := s.w.Close()
	if s.r != s.w {
		err = errors.Join(err, s.r.Close())
	}
	return err
}
