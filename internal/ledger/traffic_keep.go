package ledger

// The recorded traffic's housekeeping: seconds folded into minutes past a
// day, the retention and the size bound.

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// coarsenSQL folds one range of second buckets into minutes. The WHERE
// before the conflict clause is SQLite's rule for INSERT … SELECT … ON
// CONFLICT (it would read ON as a join's). A minute's served minimum is its
// seconds' smallest positive one (min skips the NULLs the CASE makes of
// the 0s, "none"), 0 when none had one.
const coarsenSQL = "INSERT INTO traffic_buckets (start_s, series_id, width_s, requests, rejected, latency_sum_ns, " +
	"latency_max_ns, apf_wait_sum_ns, served_latency_sum_ns, served_latency_min_ns) " +
	"SELECT (start_s / 60) * 60, series_id, 60, sum(requests), sum(rejected), " +
	"sum(latency_sum_ns), max(latency_max_ns), sum(apf_wait_sum_ns), sum(served_latency_sum_ns), " +
	"coalesce(min(CASE WHEN served_latency_min_ns > 0 THEN served_latency_min_ns END), 0) FROM traffic_buckets " +
	"WHERE start_s >= ? AND start_s < ? AND width_s = 1 GROUP BY (start_s / 60) * 60, series_id " +
	"ON CONFLICT (start_s, series_id, width_s) DO UPDATE SET " + bucketSums

// trafficChunk is the span of buckets one prune or coarsening statement
// touches: the audit webhook's appends interleave between chunks.
const trafficChunk = int64(time.Hour / time.Second)

// coarseMark returns the coarsening's mark, at first use the oldest second
// bucket (every one before it was folded): the primary key walked from its
// start past the minute buckets before it, once a start.
func (s *sqlStore) coarseMark(ctx context.Context) (int64, error) {
	s.tc.mu.Lock()
	defer s.tc.mu.Unlock()
	if s.tc.markKnown {
		return s.tc.coarseUntil, nil
	}
	var oldestFine sql.NullInt64
	err := s.r.QueryRowContext(ctx, "SELECT min(start_s) FROM traffic_buckets WHERE width_s = 1").Scan(&oldestFine)
	if err != nil {
		return 0, fmt.Errorf("ledger: traffic: %w", err)
	}
	s.tc.coarseUntil, s.tc.markKnown = oldestFine.Int64, true
	return s.tc.coarseUntil, nil
}

// setCoarseMark moves the mark on to until.
func (s *sqlStore) setCoarseMark(until int64) {
	s.tc.mu.Lock()
	s.tc.coarseUntil = max(s.tc.coarseUntil, until)
	s.tc.mu.Unlock()
}

// CoarsenTraffic folds the second buckets before before (rounded down to a
// minute) into minute buckets, an hour at a time: each hour's sums written
// and its seconds deleted in one transaction.
func (s *sqlStore) CoarsenTraffic(ctx context.Context, before time.Time) (int64, error) {
	end := before.Unix()
	end -= end % 60
	mark, err := s.coarseMark(ctx)
	if err != nil {
		return 0, err
	}
	// The oldest second bucket at or past the mark, on the primary key.
	var first sql.NullInt64
	err = s.r.QueryRowContext(ctx, s.d.bind("SELECT min(start_s) FROM traffic_buckets WHERE start_s >= ? AND start_s < ? AND width_s = 1"),
		mark, end).Scan(&first)
	if err != nil {
		return 0, fmt.Errorf("ledger: traffic: coarsen: %w", err)
	}
	if !first.Valid {
		s.setCoarseMark(end)
		return 0, nil
	}
	from := first.Int64
	var total int64
	for from < end {
		to := min(from-from%trafficChunk+trafficChunk, end)
		n, err := s.coarsenRange(ctx, from-from%60, to)
		if err != nil {
			return total, err
		}
		total += n
		s.setCoarseMark(to)
		from = to
	}
	s.tc.coarsened.Add(total)
	return total, nil
}

func (s *sqlStore) coarsenRange(ctx context.Context, from, to int64) (n int64, err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("ledger: traffic: coarsen: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if _, err := tx.ExecContext(ctx, s.d.bind(coarsenSQL), from, to); err != nil {
		return 0, fmt.Errorf("ledger: traffic: coarsen: %w", err)
	}
	res, err := tx.ExecContext(ctx, s.d.bind("DELETE FROM traffic_buckets WHERE start_s >= ? AND start_s < ? AND width_s = 1"), from, to)
	if err != nil {
		return 0, fmt.Errorf("ledger: traffic: coarsen: %w", err)
	}
	if n, err = res.RowsAffected(); err != nil {
		return 0, fmt.Errorf("ledger: traffic: coarsen: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("ledger: traffic: coarsen: %w", err)
	}
	return n, nil
}

// PruneTraffic deletes the buckets before before, an hour at a time, then
// the series whose newest bucket went with them.
func (s *sqlStore) PruneTraffic(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.deleteTrafficBefore(ctx, before.Unix())
	s.tc.prunedAge.Add(n)
	return n, err
}

func (s *sqlStore) deleteTrafficBefore(ctx context.Context, end int64) (int64, error) {
	var oldest sql.NullInt64
	if err := s.r.QueryRowContext(ctx, "SELECT min(start_s) FROM traffic_buckets").Scan(&oldest); err != nil {
		return 0, fmt.Errorf("ledger: traffic: prune: %w", err)
	}
	var total int64
	for from := oldest.Int64; oldest.Valid && from < end; from += trafficChunk {
		res, err := s.w.ExecContext(ctx, s.d.bind("DELETE FROM traffic_buckets WHERE start_s < ?"), min(from+trafficChunk, end))
		if err != nil {
			return total, fmt.Errorf("ledger: traffic: prune: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("ledger: traffic: prune: %w", err)
		}
		total += n
	}
	s.forgetSeries()
	// A minute's rejections go with its last second.
	if _, err := s.w.ExecContext(ctx, s.d.bind("DELETE FROM traffic_rejections WHERE minute_s + 60 <= ?"), end); err != nil {
		return total, fmt.Errorf("ledger: traffic: prune rejections: %w", err)
	}
	if _, err := s.w.ExecContext(ctx, s.d.bind("DELETE FROM traffic_series WHERE last_s < ?"), end); err != nil {
		return total, fmt.Errorf("ledger: traffic: prune series: %w", err)
	}
	return total, nil
}

// trimTraffic enforces Options.MaxTrafficBuckets as trimWrites does its
// bound: once a hundredth of it was upserted since the last check, the
// buckets older than the newest MaxTrafficBuckets go (whole seconds: the
// cut is a start time).
func (s *sqlStore) trimTraffic(ctx context.Context, added int) {
	limit := s.maxTrafficBuckets
	if limit <= 0 || s.tc.sinceTrim.Add(int64(added)) < max(limit/100, 1) {
		return
	}
	s.tc.sinceTrim.Store(0)
	var cut int64
	err := s.r.QueryRowContext(ctx, s.d.bind("SELECT start_s FROM traffic_buckets ORDER BY start_s DESC LIMIT 1 OFFSET ?"), limit).Scan(&cut)
	if err != nil {
		return // sql.ErrNoRows: within the bound
	}
	n, _ := s.deleteTrafficBefore(ctx, cut+1)
	s.tc.prunedSize.Add(n)
}
