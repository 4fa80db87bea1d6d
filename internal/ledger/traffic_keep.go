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
// bucket, unpacked or packed (every one before it was folded): the primary
// key walked from its start past the minute buckets before it, once a
// start. The pack's mark is set with it: the oldest unpacked second (the
// newest packed minute's end when none is left, 0 when nothing is stored).
func (s *sqlStore) coarseMark(ctx context.Context) (int64, error) {
	s.tc.mu.Lock()
	defer s.tc.mu.Unlock()
	if s.tc.markKnown {
		return s.tc.coarseUntil, nil
	}
	var oldestFine, oldestPacked, newestPacked sql.NullInt64
	err := s.r.QueryRowContext(ctx, "SELECT min(start_s) FROM traffic_buckets WHERE width_s = 1").Scan(&oldestFine)
	if err == nil {
		err = s.r.QueryRowContext(ctx, "SELECT min(minute_s), max(minute_s) FROM traffic_minutes").Scan(&oldestPacked, &newestPacked)
	}
	if err != nil {
		return 0, fmt.Errorf("ledger: traffic: %w", err)
	}
	s.tc.coarseUntil = oldestFine.Int64
	if oldestPacked.Valid && (!oldestFine.Valid || oldestPacked.Int64 < oldestFine.Int64) {
		s.tc.coarseUntil = oldestPacked.Int64
	}
	switch {
	case oldestFine.Valid:
		s.tc.packUntil = oldestFine.Int64
	case newestPacked.Valid:
		s.tc.packUntil = newestPacked.Int64 + 60
	}
	s.tc.markKnown = true
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
// and its seconds deleted in one transaction; first the seconds not yet
// packed, then the packed minutes (coarsenPacked).
func (s *sqlStore) CoarsenTraffic(ctx context.Context, before time.Time) (int64, error) {
	end := before.Unix()
	end -= mod(end, 60)
	mark, err := s.coarseMark(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	defer func() { s.tc.coarsened.Add(total) }()
	// The oldest second bucket at or past the mark, on the primary key.
	var first sql.NullInt64
	err = s.r.QueryRowContext(ctx, s.d.bind("SELECT min(start_s) FROM traffic_buckets WHERE start_s >= ? AND start_s < ? AND width_s = 1"),
		mark, end).Scan(&first)
	if err != nil {
		return 0, fmt.Errorf("ledger: traffic: coarsen: %w", err)
	}
	for from := first.Int64; first.Valid && from < end; {
		to := min(from-mod(from, trafficChunk)+trafficChunk, end)
		n, err := s.coarsenRange(ctx, from-mod(from, 60), to)
		if err != nil {
			return total, err
		}
		total += n
		from = to
	}
	var oldest sql.NullInt64
	if err := s.r.QueryRowContext(ctx, "SELECT min(minute_s) FROM traffic_minutes").Scan(&oldest); err != nil {
		return total, fmt.Errorf("ledger: traffic: coarsen: %w", err)
	}
	for from := oldest.Int64; oldest.Valid && from < end; {
		to := min(from-mod(from, trafficChunk)+trafficChunk, end)
		n, err := s.coarsenPacked(ctx, from, to)
		if err != nil {
			return total, err
		}
		total += n
		from = to
	}
	s.setCoarseMark(end)
	return total, nil
}

// coarsenPacked folds the packed minutes in [from, to) into minute
// buckets (the seconds' sums added, the largest maximum and the smallest
// positive served minimum kept, as coarsenSQL does), in one transaction.
func (s *sqlStore) coarsenPacked(ctx context.Context, from, to int64) (int64, error) {
	return s.inPackedTx(ctx, "coarsen", func(tx *sql.Tx) (n int64, err error) {
		type folded struct {
			minute, series int64
			sum            slot
		}
		var out []folded
		rows, err := tx.QueryContext(ctx, s.d.bind("DELETE FROM traffic_minutes WHERE minute_s >= ? AND minute_s < ? RETURNING minute_s, series_id, slots"), from, to)
		if err != nil {
			return 0, err
		}
		var slots []slot
		for rows.Next() {
			var f folded
			var blob []byte
			if err := rows.Scan(&f.minute, &f.series, &blob); err != nil {
				rows.Close()
				return 0, err
			}
			if slots, err = decodeSlots(slots[:0], blob); err != nil {
				rows.Close()
				return 0, err
			}
			for i := range slots {
				f.sum.add(&slots[i])
			}
			n += int64(len(slots))
			out = append(out, f)
		}
		if err := rows.Close(); err != nil {
			return 0, err
		}
		upsert, err := tx.PrepareContext(ctx, s.d.bind(upsertBucketSQL))
		if err != nil {
			return 0, err
		}
		defer upsert.Close()
		for _, f := range out {
			x := &f.sum
			if _, err := upsert.ExecContext(ctx, f.minute, f.series, 60, x.requests, x.rejected, x.latSum, x.latMax, x.apfWait, x.servedSum, max(x.servedMin, 0)); err != nil {
				return 0, err
			}
		}
		return n, nil
	})
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
	var oldest, oldestPacked sql.NullInt64
	if err := s.r.QueryRowContext(ctx, "SELECT min(start_s) FROM traffic_buckets").Scan(&oldest); err != nil {
		return 0, fmt.Errorf("ledger: traffic: prune: %w", err)
	}
	if err := s.r.QueryRowContext(ctx, "SELECT min(minute_s) FROM traffic_minutes").Scan(&oldestPacked); err != nil {
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
	// Packed minutes: the whole ones before end, then the seconds before
	// end of the minute it falls in.
	endMinute := end - mod(end, 60)
	for from := oldestPacked.Int64; oldestPacked.Valid && from < endMinute; from += trafficChunk {
		n, err := s.deletePacked(ctx, min(from+trafficChunk, endMinute))
		total += n
		if err != nil {
			return total, err
		}
	}
	if oldestPacked.Valid && end > endMinute {
		n, err := s.cutPackedMinute(ctx, endMinute, end-endMinute)
		total += n
		if err != nil {
			return total, err
		}
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

// deletePacked deletes the packed minutes before end and counts their
// buckets.
func (s *sqlStore) deletePacked(ctx context.Context, end int64) (int64, error) {
	rows, err := s.w.QueryContext(ctx, s.d.bind("DELETE FROM traffic_minutes WHERE minute_s < ? RETURNING buckets"), end)
	if err != nil {
		return 0, fmt.Errorf("ledger: traffic: prune: %w", err)
	}
	defer rows.Close()
	var total int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return total, fmt.Errorf("ledger: traffic: prune: %w", err)
		}
		total += n
	}
	if err := rows.Err(); err != nil {
		return total, fmt.Errorf("ledger: traffic: prune: %w", err)
	}
	return total, nil
}

// cutPackedMinute drops the seconds before offset keep of the packed rows
// of minute, in one transaction, and counts them.
func (s *sqlStore) cutPackedMinute(ctx context.Context, minute, keep int64) (int64, error) {
	return s.inPackedTx(ctx, "prune", func(tx *sql.Tx) (n int64, err error) {
		rows, err := tx.QueryContext(ctx, s.d.bind("SELECT series_id, slots FROM traffic_minutes WHERE minute_s = ?"), minute)
		if err != nil {
			return 0, err
		}
		type cut struct {
			id    int64
			slots []slot
		}
		var cuts []cut
		for rows.Next() {
			var c cut
			var blob []byte
			if err := rows.Scan(&c.id, &blob); err != nil {
				rows.Close()
				return 0, err
			}
			all, err := decodeSlots(nil, blob)
			if err != nil {
				rows.Close()
				return 0, err
			}
			i := 0
			for i < len(all) && all[i].off < keep {
				i++
			}
			if i > 0 {
				n += int64(i)
				c.slots = all[i:]
				cuts = append(cuts, c)
			}
		}
		if err := rows.Close(); err != nil {
			return 0, err
		}
		for _, c := range cuts {
			if len(c.slots) == 0 {
				_, err = tx.ExecContext(ctx, s.d.bind("DELETE FROM traffic_minutes WHERE minute_s = ? AND series_id = ?"), minute, c.id)
			} else {
				_, err = tx.ExecContext(ctx, s.d.bind(upsertPackedSQL), minute, c.id, len(c.slots), encodeSlots(nil, c.slots))
			}
			if err != nil {
				return 0, err
			}
		}
		return n, nil
	})
}

// trimTraffic enforces Options.MaxTrafficBuckets as trimWrites does its
// bound: once a hundredth of it was upserted since the last check, the
// buckets older than the newest MaxTrafficBuckets go (whole seconds: the
// cut is a start time). Buckets are counted as such, a packed minute's
// seconds each (its buckets column), not as rows.
func (s *sqlStore) trimTraffic(ctx context.Context, added int) {
	limit := s.maxTrafficBuckets
	if limit <= 0 || s.tc.sinceTrim.Add(int64(added)) < max(limit/100, 1) {
		return
	}
	s.tc.sinceTrim.Store(0)
	total, err := s.countBuckets(ctx, -1<<63, 1<<63-1)
	if err != nil || total <= limit {
		return
	}
	cut, err := s.trimCut(ctx, total-limit)
	if err != nil {
		return
	}
	n, _ := s.deleteTrafficBefore(ctx, cut+1)
	s.tc.prunedSize.Add(n)
}

// trimCut finds the second whose buckets and the older ones number at
// least excess: the oldest hour, then minute, then second that reaches it.
func (s *sqlStore) trimCut(ctx context.Context, excess int64) (int64, error) {
	oldest, _, err := s.trafficSpan(ctx)
	if err != nil || oldest == nil {
		return 0, fmt.Errorf("ledger: traffic: trim: %w", err)
	}
	var seen int64
	from := *oldest - mod(*oldest, trafficChunk)
	for _, width := range []int64{trafficChunk, 60} {
		for {
			n, err := s.countBuckets(ctx, from, from+width)
			if err != nil {
				return 0, err
			}
			if seen+n >= excess {
				break
			}
			seen += n
			from += width
			if from > 1<<62 {
				return 0, fmt.Errorf("ledger: traffic: trim: no cut")
			}
		}
	}
	perSecond, err := s.secondsOfMinute(ctx, from)
	if err != nil {
		return 0, err
	}
	for off, n := range perSecond {
		if seen += n; seen >= excess {
			return from + int64(off), nil
		}
	}
	return from + 59, nil
}

// countBuckets counts the buckets that start in [from, to), whole minutes:
// rows of traffic_buckets and the seconds of packed minutes.
func (s *sqlStore) countBuckets(ctx context.Context, from, to int64) (int64, error) {
	var rows, packed int64
	err := s.r.QueryRowContext(ctx, s.d.bind("SELECT count(*) FROM traffic_buckets WHERE start_s >= ? AND start_s < ?"), from, to).Scan(&rows)
	if err == nil {
		err = s.r.QueryRowContext(ctx, s.d.bind("SELECT coalesce(sum(buckets), 0) FROM traffic_minutes WHERE minute_s >= ? AND minute_s < ?"),
			from, to).Scan(&packed)
	}
	if err != nil {
		return 0, fmt.Errorf("ledger: traffic: count: %w", err)
	}
	return rows + packed, nil
}

// secondsOfMinute counts the buckets that start in each second of minute.
func (s *sqlStore) secondsOfMinute(ctx context.Context, minute int64) ([60]int64, error) {
	var out [60]int64
	rows, err := s.r.QueryContext(ctx, s.d.bind("SELECT start_s FROM traffic_buckets WHERE start_s >= ? AND start_s < ?"), minute, minute+60)
	if err != nil {
		return out, fmt.Errorf("ledger: traffic: count: %w", err)
	}
	for rows.Next() {
		var start int64
		if err := rows.Scan(&start); err != nil {
			rows.Close()
			return out, fmt.Errorf("ledger: traffic: count: %w", err)
		}
		out[start-minute]++
	}
	if err := rows.Close(); err != nil {
		return out, fmt.Errorf("ledger: traffic: count: %w", err)
	}
	err = s.eachPackedOf(ctx, minute, func(sl []slot) {
		for i := range sl {
			out[sl[i].off]++
		}
	})
	return out, err
}

// eachPackedOf calls each with the slots of every packed row of minute.
func (s *sqlStore) eachPackedOf(ctx context.Context, minute int64, each func([]slot)) error {
	rows, err := s.r.QueryContext(ctx, s.d.bind("SELECT slots FROM traffic_minutes WHERE minute_s = ?"), minute)
	if err != nil {
		return fmt.Errorf("ledger: traffic: %w", err)
	}
	defer rows.Close()
	var sl []slot
	for rows.Next() {
		var blob []byte
		if err := rows.Scan(&blob); err != nil {
			return fmt.Errorf("ledger: traffic: %w", err)
		}
		if sl, err = decodeSlots(sl[:0], blob); err != nil {
			return err
		}
		each(sl)
	}
	return rows.Err()
}

// trafficSpan is the oldest and the newest bucket's start over both
// tables (nil: no traffic).
func (s *sqlStore) trafficSpan(ctx context.Context) (oldest, newest *int64, err error) {
	var lo, hi, plo, phi sql.NullInt64
	if err := s.r.QueryRowContext(ctx, "SELECT min(start_s), max(start_s) FROM traffic_buckets").Scan(&lo, &hi); err != nil {
		return nil, nil, fmt.Errorf("ledger: traffic: %w", err)
	}
	if err := s.r.QueryRowContext(ctx, "SELECT min(minute_s), max(minute_s) FROM traffic_minutes").Scan(&plo, &phi); err != nil {
		return nil, nil, fmt.Errorf("ledger: traffic: %w", err)
	}
	pick := func(v int64, ok bool, cur *int64, better func(a, b int64) bool) *int64 {
		if !ok || (cur != nil && !better(v, *cur)) {
			return cur
		}
		return &v
	}
	less := func(a, b int64) bool { return a < b }
	more := func(a, b int64) bool { return a > b }
	oldest = pick(lo.Int64, lo.Valid, nil, less)
	newest = pick(hi.Int64, hi.Valid, nil, more)
	if plo.Valid {
		first, last := int64(59), int64(0)
		if err := s.eachPackedOf(ctx, plo.Int64, func(sl []slot) {
			if len(sl) > 0 {
				first = min(first, sl[0].off)
			}
		}); err != nil {
			return nil, nil, err
		}
		if err := s.eachPackedOf(ctx, phi.Int64, func(sl []slot) {
			if len(sl) > 0 {
				last = max(last, sl[len(sl)-1].off)
			}
		}); err != nil {
			return nil, nil, err
		}
		oldest = pick(plo.Int64+first, true, oldest, less)
		newest = pick(phi.Int64+last, true, newest, more)
	}
	return oldest, newest, nil
}
