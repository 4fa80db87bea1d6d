package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// writeColumns are recorded_writes' stored columns, in the order of
// writeArgs; prev_seq comes last, a lookup (insertWriteSQL).
var writeColumns = []string{
	"id", "audit_id", "time_ns", "user_name", "user_uid", "groups_json", "verb", "operation",
	"api_group", "api_version", "resource", "subresource", "namespace", "name", "obj_key",
	"code", "dry_run", "applied", "object", "object_dropped", "annotations", "refusal",
}

// insertWriteSQL stores one write; its prev_seq is the newest applied write
// of the same object stored before it, found on recorded_writes_prev (an
// index lookup). One statement per write, not a multi-row INSERT: a write's
// previous one may be in the same batch, and a statement does not see its
// own rows on PostgreSQL.
var insertWriteSQL = "INSERT INTO recorded_writes (" + strings.Join(writeColumns, ", ") + ", prev_seq) VALUES (" +
	strings.Repeat("?, ", len(writeColumns)) +
	"(SELECT max(seq) FROM recorded_writes WHERE obj_key = ? AND applied)) ON CONFLICT (id) DO NOTHING"

// scanWritesSQL reads one page of writes by keyset on seq, each with the
// object of its previous write (a join on the primary key). The window's
// bounds are written +w.time_ns so that no planner walks the time index
// for them: the rows are read in seq order from the primary key, a page
// costs its rows, not the rows of the window before it (SQLite chose
// recorded_writes_time and sorted, which made a replay of 100,000 writes
// quadratic: 70 s against 1.3 s for 10,000).
const scanWritesSQL = "SELECT w.seq, w.id, w.audit_id, w.time_ns, w.user_name, w.user_uid, w.groups_json, w.verb, w.operation, " +
	"w.api_group, w.api_version, w.resource, w.subresource, w.namespace, w.name, w.code, w.dry_run, w.object, w.object_dropped, " +
	"w.annotations, w.refusal, p.object FROM recorded_writes w LEFT JOIN recorded_writes p ON p.seq = w.prev_seq " +
	"WHERE w.seq > ? AND +w.time_ns >= ? AND +w.time_ns < ? ORDER BY w.seq LIMIT ?"

// scanPage is how many writes one page of a scan reads at most, and
// scanPageBytes how many bytes of compressed objects: a page ends at
// whichever comes first. Its objects stay compressed until each write's
// turn (a few KiB of ordinary objects, up to twice MaxObjectBytes inflated):
// at most one write's objects are inflated at a time, so a page of writes
// with huge annotations holds scanPageBytes, not 200 times 512 KiB (the
// replay's benchmark peaked at 117 MiB RSS over 100,000 writes with 128 KiB
// annotations before).
const (
	scanPage      = 200
	scanPageBytes = 4 << 20
)

// scanRow is one write of a page, its objects as stored.
type scanRow struct {
	w           Write
	object, old []byte
}

// writeCounters are what the store counts of the recorded writes since it
// opened (WriteStats).
type writeCounters struct {
	added, prunedSize, prunedAge, dropped atomic.Int64
	sinceTrim                             atomic.Int64
}

// objectKey is the key of the object a write is to: group, resource,
// namespace and name (a subresource writes the same object).
func objectKey(w *Write) string {
	return keyOf(textOf(w.APIGroup + "/" + w.Resource + "/" + w.Namespace + "/" + w.Name))
}

// objectSubresources are the subresources whose writes carry the object
// itself (their REST storage reads and writes the parent object: status of
// every kind, a pod's ephemeralcontainers and resize, a CSR's approval, a
// namespace's finalize). Any other subresource's object is of another kind
// (scale's autoscaling/v1 Scale, a pod's binding and eviction): as a later
// write's object before it would be a Scale where admission saw the
// Deployment.
var objectSubresources = map[string]bool{"status": true, "ephemeralcontainers": true, "resize": true, "approval": true, "finalize": true}

// carriesTheObject tells whether w's object is the object at obj_key.
func carriesTheObject(w *Write) bool { return w.Subresource == "" || objectSubresources[w.Subresource] }

func writeArgs(w *Write) ([]any, error) {
	if w.ID == "" || w.Time.IsZero() {
		return nil, errors.New("ledger: a recorded write needs an ID and a time")
	}
	groups, err := jsonList(w.Groups)
	if err != nil {
		return nil, err
	}
	anns := "{}"
	if len(w.Annotations) > 0 {
		b, err := json.Marshal(w.Annotations)
		if err != nil {
			return nil, err
		}
		anns = textOf(string(b))
	}
	var object any // NULL when unknown
	dropped := w.ObjectDropped
	if w.Object != nil && len(w.Object) > MaxObjectBytes {
		dropped = true
	} else if w.Object != nil {
		object, err = compress(w.Object)
		if err != nil {
			return nil, err
		}
	}
	key := objectKey(w)
	prevKey := key
	if w.Operation == OpCreate || !carriesTheObject(w) {
		// A create has no object before it, whatever was recorded of
		// the name's earlier life; a write of another kind (a Scale)
		// has none recorded: its before is the old Scale, not the object.
		prevKey = ""
	}
	return []any{
		keyOf(w.ID), textOf(w.AuditID), w.Time.UnixNano(), textOf(w.User), textOf(w.UserUID), groups, textOf(w.Verb), w.Operation,
		textOf(w.APIGroup), textOf(w.APIVersion), textOf(w.Resource), textOf(w.Subresource), textOf(w.Namespace), textOf(w.Name), key,
		w.Code, w.DryRun, w.Applied() && !dropped && object != nil && carriesTheObject(w), object, dropped, anns,
		textOf(truncateUTF8(w.Refusal, MaxRefusalBytes)), prevKey,
	}, nil
}

// AppendWrites stores the writes one statement each, in one transaction.
func (s *sqlStore) AppendWrites(ctx context.Context, writes []Write) (added int, err error) {
	if len(writes) == 0 {
		return 0, nil
	}
	args := make([][]any, len(writes))
	dropped := 0
	for i := range writes {
		if args[i], err = writeArgs(&writes[i]); err != nil {
			return 0, err
		}
		if args[i][19].(bool) {
			dropped++
		}
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("ledger: recorded writes: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	stmt, err := tx.PrepareContext(ctx, s.d.bind(insertWriteSQL))
	if err != nil {
		return 0, fmt.Errorf("ledger: recorded writes: %w", err)
	}
	defer stmt.Close()
	for _, a := range args {
		res, err := stmt.ExecContext(ctx, a...)
		if err != nil {
			return 0, fmt.Errorf("ledger: recorded writes: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("ledger: recorded writes: %w", err)
		}
		added += int(n)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("ledger: recorded writes: commit: %w", err)
	}
	s.wc.added.Add(int64(added))
	s.wc.dropped.Add(int64(dropped))
	s.trimWrites(ctx, added)
	return added, nil
}

// ScanWrites reads keyset pages of writes and hands each to each once the
// page is read and its connection given back. The next page is read while
// each runs on this one (one page ahead, on a goroutine of its own): the
// database's share of a replay (a quarter of its CPU) overlaps the
// evaluation's on a second core. A page waiting to be taken holds no
// connection, and at most three pages of stored objects are in memory.
func (s *sqlStore) ScanWrites(ctx context.Context, q WriteQuery, each func(*Write) error) error {
	since, until := q.bounds()
	query := s.d.bind(scanWritesSQL)
	type read struct {
		page []scanRow
		more bool
		err  error
	}
	pages := make(chan read, 1)
	readCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	defer func() {
		// An early return (each's error, ctx) stops the reader, and waits
		// for it: nothing of the scan outlives the call.
		stop()
		<-done
	}()
	go func() {
		defer close(done)
		var after int64
		for {
			page := make([]scanRow, 0, scanPage)
			more, err := s.scanPage(readCtx, query, after, since, until, &page)
			if err != nil || !more || len(page) == 0 {
				more = false
			} else {
				// Read before the page is handed over: from then on its
				// rows are the consumer's, which clears each it is done
				// with (inflateAndHand). Reading the last one after the
				// send was a data race (CI's race pass caught it).
				after = page[len(page)-1].w.Seq
			}
			select {
			case pages <- read{page, more, err}:
			case <-readCtx.Done():
				return
			}
			if !more {
				return
			}
		}
	}()
	for {
		var r read
		select {
		case r = <-pages:
		case <-ctx.Done():
			return ctx.Err()
		}
		if r.err != nil {
			return r.err
		}
		for i := range r.page {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := inflateAndHand(&r.page[i], each); err != nil {
				return err
			}
		}
		if !r.more {
			return ctx.Err()
		}
	}
}

// inflateAndHand inflates a row's objects, hands its write to each and lets
// the inflated objects go as soon as each is done with them.
func inflateAndHand(r *scanRow, each func(*Write) error) (err error) {
	if r.w.Object, err = decompress(r.object); err != nil {
		return fmt.Errorf("ledger: recorded write %d: object: %w", r.w.Seq, err)
	}
	if r.w.OldObject, err = decompress(r.old); err != nil {
		return fmt.Errorf("ledger: recorded write %d: old object: %w", r.w.Seq, err)
	}
	err = each(&r.w)
	*r = scanRow{w: Write{Seq: r.w.Seq}}
	return err
}

// scanPage reads one page of writes after seq within the exports'
// connection budget (exportConns), objects compressed; more says whether
// writes may follow it (it ended at scanPage rows or scanPageBytes).
func (s *sqlStore) scanPage(ctx context.Context, query string, after, since, until int64, page *[]scanRow) (more bool, err error) {
	select {
	case s.exportSlots <- struct{}{}:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { <-s.exportSlots }()
	rows, err := s.r.QueryContext(ctx, query, after, since, until, scanPage)
	if err != nil {
		return false, fmt.Errorf("ledger: recorded writes: %w", err)
	}
	defer rows.Close()
	bytes := 0
	for rows.Next() {
		if bytes >= scanPageBytes {
			return true, nil // the rest of the page comes in the next one
		}
		var (
			w            Write
			timeNS       int64
			groups, anns string
			object, old  []byte
		)
		if err := rows.Scan(&w.Seq, &w.ID, &w.AuditID, &timeNS, &w.User, &w.UserUID, &groups, &w.Verb, &w.Operation,
			&w.APIGroup, &w.APIVersion, &w.Resource, &w.Subresource, &w.Namespace, &w.Name, &w.Code, &w.DryRun,
			&object, &w.ObjectDropped, &anns, &w.Refusal, &old); err != nil {
			return false, fmt.Errorf("ledger: recorded writes: %w", err)
		}
		w.Time = time.Unix(0, timeNS).UTC()
		if err := json.Unmarshal([]byte(groups), &w.Groups); err != nil {
			return false, fmt.Errorf("ledger: recorded write %d: groups: %w", w.Seq, err)
		}
		if err := json.Unmarshal([]byte(anns), &w.Annotations); err != nil {
			return false, fmt.Errorf("ledger: recorded write %d: annotations: %w", w.Seq, err)
		}
		bytes += len(object) + len(old)
		*page = append(*page, scanRow{w: w, object: object, old: old})
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("ledger: recorded writes: %w", err)
	}
	return len(*page) == scanPage, nil
}

// PruneWrites deletes the writes older than before, in chunks.
func (s *sqlStore) PruneWrites(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.deleteWrites(ctx, "time_ns < ?", before.UnixNano())
	s.wc.prunedAge.Add(n)
	return n, err
}

// deleteWrites deletes the writes where cond holds, oldest first, s.pruneChunk
// at a time so that the audit webhook's appends interleave.
func (s *sqlStore) deleteWrites(ctx context.Context, cond string, arg int64) (int64, error) {
	del := s.d.bind("DELETE FROM recorded_writes WHERE seq IN (SELECT seq FROM recorded_writes WHERE " + cond + " ORDER BY seq LIMIT ?)")
	var total int64
	for {
		res, err := s.w.ExecContext(ctx, del, arg, s.pruneChunk)
		if err != nil {
			return total, fmt.Errorf("ledger: recorded writes: prune: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("ledger: recorded writes: prune: %w", err)
		}
		total += n
		if n < s.pruneChunk {
			return total, nil
		}
	}
}

// trimWrites enforces Options.MaxWrites as the ledger's trim does (trim.go:
// a count, not bytes, for the same reasons): once a hundredth of the bound
// was added since the last check, the writes past the newest MaxWrites go.
// It runs in the Append that crossed the hundredth, after its commit: the
// walk is on the primary key, its deletes in chunks. A failed trim is
// tried again at the next hundredth.
func (s *sqlStore) trimWrites(ctx context.Context, added int) {
	limit := s.maxWrites
	if limit <= 0 || s.wc.sinceTrim.Add(int64(added)) < max(limit/100, 1) {
		return
	}
	s.wc.sinceTrim.Store(0)
	var cut int64
	err := s.r.QueryRowContext(ctx, s.d.bind("SELECT seq FROM recorded_writes ORDER BY seq DESC LIMIT 1 OFFSET ?"), limit).Scan(&cut)
	if err != nil {
		return // sql.ErrNoRows: within the bound
	}
	n, _ := s.deleteWrites(ctx, "seq <= ?", cut)
	s.wc.prunedSize.Add(n)
}

// WriteStats counts the recorded writes (count(*): an index-only scan on
// both backends, a few ms per 100,000 rows).
// CountWrites counts the writes of q's window on the time index (about
// 10 ms for 100,000 writes in SQLite).
func (s *sqlStore) CountWrites(ctx context.Context, q WriteQuery) (int64, error) {
	since, until := q.bounds()
	var n int64
	err := s.r.QueryRowContext(ctx, s.d.bind("SELECT count(*) FROM recorded_writes WHERE time_ns >= ? AND time_ns < ?"), since, until).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("ledger: recorded writes: count: %w", err)
	}
	return n, nil
}

// bounds are q's window in the time_ns column's unit, open ends filled.
func (q WriteQuery) bounds() (since, until int64) {
	since, until = 0, 1<<63-1
	if !q.Since.IsZero() {
		since = q.Since.UnixNano()
	}
	if !q.Until.IsZero() {
		until = q.Until.UnixNano()
	}
	return since, until
}

func (s *sqlStore) WriteStats(ctx context.Context) (WriteStats, error) {
	st := WriteStats{Retention: s.writeRetention, MaxWrites: s.maxWrites,
		PrunedForSize: s.wc.prunedSize.Load(), PrunedForAge: s.wc.prunedAge.Load(), ObjectsDropped: s.wc.dropped.Load()}
	var oldest, newest sql.NullInt64
	err := s.r.QueryRowContext(ctx, "SELECT count(*), min(time_ns), max(time_ns) FROM recorded_writes").Scan(&st.Writes, &oldest, &newest)
	if err != nil {
		return WriteStats{}, fmt.Errorf("ledger: recorded writes: stats: %w", err)
	}
	if oldest.Valid {
		st.Oldest, st.Newest = time.Unix(0, oldest.Int64).UTC(), time.Unix(0, newest.Int64).UTC()
	}
	return st, nil
}

// truncateUTF8 is s cut to at most n bytes at a rune's start.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
