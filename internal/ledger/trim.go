package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The size bound (Options.MaxEntries): the ledger keeps its newest
// MaxEntries entries, the retention bounding it by time and this by size, so
// a storm of writes (a runaway controller patching one object) cannot fill
// the disk before the retention would prune it.
//
// Entries, not bytes: both backends find the MaxEntries-th newest entry by
// walking the time index they already have (an OFFSET, no table scan), and
// deleting rows lowers the count at once; neither gives disk back on DELETE
// (SQLite's free pages, PostgreSQL's dead tuples until VACUUM FULL), so a
// bound in bytes measured on the files could not be met by deleting, and
// summing row sizes reads the whole table. An entry is at most
// MaxObjectBytes of object and a diff, so the count bounds the bytes too.

// trimTimeout bounds one trim (the walk and its chunks of deletes).
const trimTimeout = 10 * time.Minute

// trimmer enforces MaxEntries in the background, after Appends: when the
// entries added since the last check reach a hundredth of the bound (the
// ledger may overshoot it by that much), one trim runs; the walk of the
// index it costs is thus amortised over a hundredth of the bound's appends.
type trimmer struct {
	max     int64
	every   int64
	added   atomic.Int64 // entries added since the last check
	running sync.Mutex   // one trim at a time (TryLock)
	wg      sync.WaitGroup
	ctx     context.Context
	stop    context.CancelFunc
	pruned  atomic.Int64 // entries pruned for size since the store opened
}

func newTrimmer(bound int64) *trimmer {
	t := &trimmer{max: bound, every: max(bound/100, 1)}
	t.ctx, t.stop = context.WithCancel(context.Background())
	// The first Append checks: a ledger opened over its bound (the bound
	// lowered) is trimmed without waiting for a hundredth of it.
	t.added.Store(t.every)
	return t
}

// appended counts n new entries and starts a trim when it is time.
func (s *sqlStore) appended(n int) {
	t := s.trim
	if t == nil || n == 0 || t.added.Add(int64(n)) < t.every || !t.running.TryLock() {
		return
	}
	t.added.Store(0)
	t.wg.Go(func() {
		for {
			ctx, cancel := context.WithTimeout(t.ctx, trimTimeout)
			// A failed trim (the database away) is tried again after the
			// next hundredth of the bound.
			_, _ = s.trimToMax(ctx)
			cancel()
			t.running.Unlock()
			// An Append that found this trim running counted its entries
			// before trying the lock: they are seen here, not lost.
			if t.added.Load() < t.every || t.ctx.Err() != nil || !t.running.TryLock() {
				return
			}
			t.added.Store(0)
		}
	})
}

// trimToMax deletes the entries past the newest max, oldest first, in
// chunks of s.pruneChunk as Prune does, and counts them.
func (s *sqlStore) trimToMax(ctx context.Context) (int64, error) {
	t := s.trim
	var timeNS, seq int64
	// The newest entry past the bound: every entry at or before it goes. A
	// read (SQLite's readers: the walk holds no writer from the Appends).
	err := s.r.QueryRowContext(ctx, s.d.bind("SELECT time_ns, seq FROM ledger_entries ORDER BY time_ns DESC, seq DESC LIMIT 1 OFFSET ?"), t.max).Scan(&timeNS, &seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("ledger: trim: %w", err)
	}
	del := s.d.bind("DELETE FROM ledger_entries WHERE seq IN (SELECT seq FROM ledger_entries WHERE time_ns < ? OR (time_ns = ? AND seq <= ?) ORDER BY time_ns, seq LIMIT ?)")
	var total int64
	for {
		res, err := s.w.ExecContext(ctx, del, timeNS, timeNS, seq, s.pruneChunk)
		if err != nil {
			return total, fmt.Errorf("ledger: trim: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("ledger: trim: %w", err)
		}
		total += n
		t.pruned.Add(n)
		if n < s.pruneChunk {
			return total, nil
		}
	}
}

// PrunedForSize is how many entries the size bound pruned since the store
// opened (the metrics read it).
func (s *sqlStore) PrunedForSize() int64 {
	if s.trim == nil {
		return 0
	}
	return s.trim.pruned.Load()
}

// closeTrim ends a trim running and waits for it.
func (s *sqlStore) closeTrim() {
	if s.trim != nil {
		s.trim.stop()
		s.trim.wg.Wait()
	}
}
