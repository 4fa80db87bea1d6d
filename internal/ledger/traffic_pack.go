package ledger

// Packing: the second buckets the ingest upserted into traffic_buckets,
// moved a minute per series into one traffic_minutes row behind it.
// Ingest keeps its one cheap upsert per bucket (the audit webhook's events
// come late, out of order and in batches, and a read-modify-write of a
// packed row per batch would rewrite its whole minute each time); the scan
// reads ~60 times fewer rows.

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"
)

// DefaultTrafficPackAfter is how far behind now PackTraffic packs: the
// audit webhook's batches are mostly in by then. A second that comes later
// is a row of its own until the next pack merges it into its minute; the
// scan adds the two meanwhile.
const DefaultTrafficPackAfter = 2 * time.Minute

// packSlack is how far behind its mark a pack looks again: an append that
// read the mark before a pack moved it on may commit a second behind it.
const packSlack = int64(5 * 60)

// trafficLockKey is the PostgreSQL advisory lock a transaction that
// rewrites packed minutes holds: two replicas must not both merge into the
// same row (SQLite has one writer).
const trafficLockKey = 46_0011

// lockPacked takes the packed minutes' lock for tx's duration.
func (s *sqlStore) lockPacked(ctx context.Context, tx *sql.Tx) error {
	if s.d.name != postgresName {
		return nil
	}
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", trafficLockKey)
	return err
}

// packMark returns the pack's mark: every second bucket before it was
// inPackedTx runs f in one write transaction holding the packed minutes'
// lock (lockPacked): committed when f succeeds, rolled back otherwise, its
// error prefixed "ledger: traffic: <what>:". Packing, coarsening and
// pruning each rewrite packed rows this way.
func (s *sqlStore) inPackedTx(ctx context.Context, what string, f func(tx *sql.Tx) (int64, error)) (int64, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("ledger: traffic: %s: %w", what, err)
	}
	n, err := func() (int64, error) {
		if err := s.lockPacked(ctx, tx); err != nil {
			return 0, err
		}
		n, err := f(tx)
		if err != nil {
			return 0, err
		}
		return n, tx.Commit()
	}()
	if err != nil {
		_ = tx.Rollback()
		return 0, fmt.Errorf("ledger: traffic: %s: %w", what, err)
	}
	return n, nil
}

// packed by this store, except the late ones noted since (lateFrom).
func (s *sqlStore) packMark(ctx context.Context) (int64, error) {
	if _, err := s.coarseMark(ctx); err != nil {
		return 0, err
	}
	s.tc.mu.Lock()
	defer s.tc.mu.Unlock()
	return s.tc.packUntil, nil
}

// noteLate remembers a second appended behind the pack's mark.
func (s *sqlStore) noteLate(start int64) {
	s.tc.mu.Lock()
	if !s.tc.hasLate || start < s.tc.lateFrom {
		s.tc.lateFrom, s.tc.hasLate = start, true
	}
	s.tc.mu.Unlock()
}

// PackTraffic moves the second buckets of the minutes that end before
// before (rounded down to a minute) into packed minutes, a minute per
// transaction (its seconds deleted and its packed rows written, merged
// into a row already packed for a late second).
func (s *sqlStore) PackTraffic(ctx context.Context, before time.Time) (int64, error) {
	end := before.Unix()
	end -= mod(end, 60)
	mark, err := s.packMark(ctx)
	if err != nil {
		return 0, err
	}
	from := mark - packSlack
	s.tc.mu.Lock()
	if s.tc.hasLate {
		from, s.tc.hasLate = min(from, s.tc.lateFrom), false
	}
	s.tc.mu.Unlock()
	var total int64
	for from < end {
		var first sql.NullInt64
		err := s.r.QueryRowContext(ctx, s.d.bind("SELECT min(start_s) FROM traffic_buckets WHERE start_s >= ? AND start_s < ? AND width_s = 1"),
			from, end).Scan(&first)
		if err != nil {
			s.noteLate(from)
			return total, fmt.Errorf("ledger: traffic: pack: %w", err)
		}
		if !first.Valid {
			break
		}
		minute := first.Int64 - mod(first.Int64, 60)
		n, err := s.packMinute(ctx, minute)
		if err != nil {
			s.noteLate(minute)
			return total, err
		}
		total += n
		from = minute + 60
	}
	s.tc.mu.Lock()
	s.tc.packUntil = max(s.tc.packUntil, end)
	s.tc.mu.Unlock()
	s.tc.packed.Add(total)
	return total, nil
}

// mod is x mod m, never negative.
func mod(x, m int64) int64 {
	return ((x % m) + m) % m
}

// packSecondsSQL takes a minute's second buckets out of traffic_buckets.
const packSecondsSQL = "DELETE FROM traffic_buckets WHERE start_s >= ? AND start_s < ? AND width_s = 1 RETURNING start_s, series_id, " +
	"requests, rejected, latency_sum_ns, latency_max_ns, apf_wait_sum_ns, served_latency_sum_ns, served_latency_min_ns"

// upsertPackedSQL writes a packed minute whole (merged in Go).
const upsertPackedSQL = "INSERT INTO traffic_minutes (minute_s, series_id, buckets, slots) VALUES (?, ?, ?, ?) " +
	"ON CONFLICT (minute_s, series_id) DO UPDATE SET buckets = excluded.buckets, slots = excluded.slots"

func (s *sqlStore) packMinute(ctx context.Context, minute int64) (int64, error) {
	return s.inPackedTx(ctx, "pack", func(tx *sql.Tx) (n int64, err error) {
		bySeries := map[int64][]slot{}
		rows, err := tx.QueryContext(ctx, s.d.bind(packSecondsSQL), minute, minute+60)
		if err != nil {
			return 0, err
		}
		for rows.Next() {
			var start, series int64
			var sl slot
			if err := rows.Scan(&start, &series, &sl.requests, &sl.rejected, &sl.latSum, &sl.latMax, &sl.apfWait, &sl.servedSum, &sl.servedMin); err != nil {
				rows.Close()
				return 0, err
			}
			sl.off = start - minute
			bySeries[series] = append(bySeries[series], sl)
			n++
		}
		if err := rows.Close(); err != nil {
			return 0, err
		}
		if err := rows.Err(); err != nil {
			return 0, err
		}
		// The minute's rows already packed: a late second merges into them.
		stored := map[int64][]byte{}
		rows, err = tx.QueryContext(ctx, s.d.bind("SELECT series_id, slots FROM traffic_minutes WHERE minute_s = ?"), minute)
		if err != nil {
			return 0, err
		}
		for rows.Next() {
			var id int64
			var blob []byte
			if err := rows.Scan(&id, &blob); err != nil {
				rows.Close()
				return 0, err
			}
			if _, ok := bySeries[id]; ok {
				stored[id] = blob
			}
		}
		if err := rows.Close(); err != nil {
			return 0, err
		}
		upsert, err := tx.PrepareContext(ctx, s.d.bind(upsertPackedSQL))
		if err != nil {
			return 0, err
		}
		defer upsert.Close()
		ids := make([]int64, 0, len(bySeries))
		for id := range bySeries {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		var blob []byte
		var old []slot
		for _, id := range ids {
			slots := bySeries[id]
			slices.SortFunc(slots, func(a, b slot) int { return int(a.off - b.off) })
			if b, ok := stored[id]; ok {
				if old, err = decodeSlots(old[:0], b); err != nil {
					return 0, err
				}
				slots = mergeSlots(old, slots)
			}
			blob = encodeSlots(blob, slots)
			if _, err := upsert.ExecContext(ctx, minute, id, len(slots), blob); err != nil {
				return 0, err
			}
		}
		return n, nil
	})
}
