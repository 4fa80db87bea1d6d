package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// trafficCounters are what the store counts of the traffic since it opened
// (TrafficStats), and the coarsening's mark.
type trafficCounters struct {
	prunedSize, prunedAge, coarsened atomic.Int64
	sinceTrim                        atomic.Int64
	// mu guards coarseUntil: the second buckets before it were folded into
	// minutes by this store (0: not yet known). A bucket an API server
	// reports late, older than it, is stored as a minute at once. Another
	// replica's mark may be ahead: its late buckets stay seconds, counted
	// all the same, until the retention prunes them.
	mu          sync.Mutex
	markKnown   bool
	coarseUntil int64
	// seen remembers the series this store committed, by key: their id and
	// the hour their last_s reaches (seriesSeen). A batch's series seen
	// within the hour of its bucket takes no statement: an upsert that
	// changes nothing still writes a row version on PostgreSQL (the
	// benchmark's series table grew by a dead 700-byte tuple per bucket).
	// Bounded by maxSeenSeries, forgotten whole past it and on every prune
	// (a pruned series' id must not be reused).
	seenMu  sync.Mutex
	seen    map[string]seriesSeen
	seenGen uint64 // counts the forgetting
}

// seriesSeen is a committed series' id and the hour its stored last_s
// reaches at least.
type seriesSeen struct {
	id, hour int64
}

// maxSeenSeries bounds trafficCounters.seen: about 100 bytes each.
const maxSeenSeries = 100_000

// lastHour rounds a second up to its hour's end: series are upserted again
// once an hour, not every batch, and last_s (pruning's key) is at most an
// hour ahead of the newest bucket.
func lastHour(sec int64) int64 {
	return sec - sec%3600 + 3599
}

// upsertSeriesSQL stores a series, or moves its last_s on, and returns its id.
const upsertSeriesSQL = "INSERT INTO traffic_series (key, instance, user_name, groups_json, verb, api_group, resource, " +
	"subresource, namespace, non_resource_url, class, last_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) " +
	"ON CONFLICT (key) DO UPDATE SET last_s = CASE WHEN excluded.last_s > traffic_series.last_s " +
	"THEN excluded.last_s ELSE traffic_series.last_s END RETURNING id"

// upsertBucketSQL adds one bucket's counts to the stored one.
const upsertBucketSQL = "INSERT INTO traffic_buckets (start_s, series_id, width_s, requests, rejected, latency_sum_ns, " +
	"latency_max_ns, apf_wait_sum_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (start_s, series_id, width_s) DO UPDATE SET " +
	bucketSums

// bucketSums is the conflict clause's sums, shared with the coarsening.
const bucketSums = "requests = traffic_buckets.requests + excluded.requests, " +
	"rejected = traffic_buckets.rejected + excluded.rejected, " +
	"latency_sum_ns = traffic_buckets.latency_sum_ns + excluded.latency_sum_ns, " +
	"latency_max_ns = CASE WHEN excluded.latency_max_ns > traffic_buckets.latency_max_ns " +
	"THEN excluded.latency_max_ns ELSE traffic_buckets.latency_max_ns END, " +
	"apf_wait_sum_ns = traffic_buckets.apf_wait_sum_ns + excluded.apf_wait_sum_ns"

// coarsenSQL folds one range of second buckets into minutes. The WHERE
// before the conflict clause is SQLite's rule for INSERT … SELECT … ON
// CONFLICT (it would read ON as a join's).
const coarsenSQL = "INSERT INTO traffic_buckets (start_s, series_id, width_s, requests, rejected, latency_sum_ns, " +
	"latency_max_ns, apf_wait_sum_ns) SELECT (start_s / 60) * 60, series_id, 60, sum(requests), sum(rejected), " +
	"sum(latency_sum_ns), max(latency_max_ns), sum(apf_wait_sum_ns) FROM traffic_buckets " +
	"WHERE start_s >= ? AND start_s < ? AND width_s = 1 GROUP BY (start_s / 60) * 60, series_id " +
	"ON CONFLICT (start_s, series_id, width_s) DO UPDATE SET " + bucketSums

// scanTrafficSQL reads one page of buckets by keyset on the primary key,
// each with its series (a join on the series' primary key).
const scanTrafficSQL = "SELECT b.start_s, b.series_id, b.width_s, b.requests, b.rejected, b.latency_sum_ns, b.latency_max_ns, " +
	"b.apf_wait_sum_ns, s.instance, s.user_name, s.groups_json, s.verb, s.api_group, s.resource, s.subresource, s.namespace, " +
	"s.non_resource_url, s.class FROM traffic_buckets b JOIN traffic_series s ON s.id = b.series_id " +
	"WHERE (b.start_s, b.series_id, b.width_s) > (?, ?, ?) AND b.start_s < ? ORDER BY b.start_s, b.series_id, b.width_s LIMIT ?"

// trafficPage is how many buckets one page of a scan reads.
const trafficPage = 1000

// trafficChunk is the span of buckets one prune or coarsening statement
// touches: the audit webhook's appends interleave between chunks.
const trafficChunk = int64(time.Hour / time.Second)

// seriesKey identifies a series: the SHA-256 of its fields as stored.
func seriesKey(s *TrafficSeries) (string, error) {
	b, err := json.Marshal([]any{s.Instance, s.User, s.Groups, s.Verb, s.APIGroup, s.Resource, s.Subresource,
		s.Namespace, s.NonResourceURL, s.Class})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// storableSeries makes every field storable the same on both backends.
func storableSeries(s TrafficSeries) TrafficSeries {
	groups := make([]string, len(s.Groups))
	for i, g := range s.Groups {
		groups[i] = textOf(g)
	}
	return TrafficSeries{Instance: textOf(s.Instance), User: textOf(s.User), Groups: groups, Verb: textOf(s.Verb),
		APIGroup: textOf(s.APIGroup), Resource: textOf(s.Resource), Subresource: textOf(s.Subresource),
		Namespace: textOf(s.Namespace), NonResourceURL: textOf(s.NonResourceURL), Class: textOf(s.Class)}
}

// AppendTraffic upserts each series once and each bucket once, in one
// transaction: a batch's statements are its distinct series and buckets,
// never its events.
func (s *sqlStore) AppendTraffic(ctx context.Context, buckets []TrafficBucket) (err error) {
	if len(buckets) == 0 {
		return nil
	}
	coarseUntil, err := s.coarseMark(ctx)
	if err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("ledger: traffic: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	series, err := tx.PrepareContext(ctx, s.d.bind(upsertSeriesSQL))
	if err != nil {
		return fmt.Errorf("ledger: traffic: %w", err)
	}
	defer series.Close()
	bucket, err := tx.PrepareContext(ctx, s.d.bind(upsertBucketSQL))
	if err != nil {
		return fmt.Errorf("ledger: traffic: %w", err)
	}
	defer bucket.Close()
	s.tc.seenMu.Lock()
	known, gen := s.tc.seen, s.tc.seenGen
	s.tc.seenMu.Unlock()
	ids := map[string]seriesSeen{} // upserted by this batch, remembered once committed
	for i := range buckets {
		b := &buckets[i]
		if b.Width != TrafficSecond && b.Width != TrafficMinute {
			return fmt.Errorf("ledger: traffic: a bucket of %s (a second or a minute)", b.Width)
		}
		start, width := b.Start.Unix(), int64(b.Width/time.Second)
		if width == 1 && start < coarseUntil {
			width = 60 // reported after its second was folded into minutes
		}
		start -= start % width
		ser := storableSeries(b.Series)
		key, err := seriesKey(&ser)
		if err != nil {
			return err
		}
		seen, ok := ids[key]
		if !ok {
			s.tc.seenMu.Lock()
			seen, ok = known[key]
			s.tc.seenMu.Unlock()
		}
		if !ok || seen.hour < start {
			groups, err := jsonList(ser.Groups)
			if err != nil {
				return err
			}
			seen.hour = max(seen.hour, lastHour(start))
			if err := series.QueryRowContext(ctx, key, ser.Instance, ser.User, groups, ser.Verb, ser.APIGroup, ser.Resource,
				ser.Subresource, ser.Namespace, ser.NonResourceURL, ser.Class, seen.hour).Scan(&seen.id); err != nil {
				return fmt.Errorf("ledger: traffic: series: %w", err)
			}
			ids[key] = seen
		}
		if _, err := bucket.ExecContext(ctx, start, seen.id, width, b.Requests, b.Rejected, int64(b.LatencySum),
			int64(b.LatencyMax), int64(b.APFWaitSum)); err != nil {
			return fmt.Errorf("ledger: traffic: bucket: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("ledger: traffic: commit: %w", err)
	}
	s.rememberSeries(gen, ids)
	s.trimTraffic(ctx, len(buckets))
	return nil
}

// rememberSeries adds a committed batch's series to the store's, unless a
// prune forgot the store's since the batch began (gen).
func (s *sqlStore) rememberSeries(gen uint64, ids map[string]seriesSeen) {
	s.tc.seenMu.Lock()
	defer s.tc.seenMu.Unlock()
	if gen != s.tc.seenGen {
		return
	}
	if s.tc.seen == nil || len(s.tc.seen)+len(ids) > maxSeenSeries {
		s.tc.seen = make(map[string]seriesSeen, len(ids))
	}
	for k, v := range ids {
		s.tc.seen[k] = v
	}
}

// forgetSeries drops the remembered series: after a prune their ids may
// be gone.
func (s *sqlStore) forgetSeries() {
	s.tc.seenMu.Lock()
	s.tc.seen = nil
	s.tc.seenGen++
	s.tc.seenMu.Unlock()
}

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

// ScanTraffic reads keyset pages of buckets and hands each bucket to each
// once its page is read and the connection given back.
func (s *sqlStore) ScanTraffic(ctx context.Context, q TrafficQuery, each func(*TrafficBucket) error) error {
	since, until := int64(-1<<63), int64(1<<63-1)
	if !q.Since.IsZero() {
		// The first second whose bucket may start at or after Since.
		since = q.Since.Unix()
		if q.Since.After(time.Unix(since, 0)) {
			since++
		}
	}
	if !q.Until.IsZero() {
		until = q.Until.Unix()
		if q.Until.After(time.Unix(until, 0)) {
			until++
		}
	}
	query := s.d.bind(scanTrafficSQL)
	// The key just before since's first: (since, -1, -1) < (since, id, width).
	after := [3]int64{since, -1, -1}
	for {
		page, err := s.trafficPage(ctx, query, after, until)
		if err != nil {
			return err
		}
		for i := range page {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := each(&page[i].b); err != nil {
				return err
			}
		}
		if len(page) < trafficPage {
			return ctx.Err()
		}
		after = page[len(page)-1].key
	}
}

// trafficRow is one bucket of a page and its key.
type trafficRow struct {
	b   TrafficBucket
	key [3]int64
}

func (s *sqlStore) trafficPage(ctx context.Context, query string, after [3]int64, until int64) ([]trafficRow, error) {
	select {
	case s.exportSlots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.exportSlots }()
	rows, err := s.r.QueryContext(ctx, query, after[0], after[1], after[2], until, trafficPage)
	if err != nil {
		return nil, fmt.Errorf("ledger: traffic: %w", err)
	}
	defer rows.Close()
	page := make([]trafficRow, 0, trafficPage)
	// A page holds each series' groups once.
	groupsOf := map[string][]string{}
	for rows.Next() {
		var (
			r                     trafficRow
			sum, mx, wait         int64
			groups                string
			start, series, widthS int64
		)
		ser := &r.b.Series
		if err := rows.Scan(&start, &series, &widthS, &r.b.Requests, &r.b.Rejected, &sum, &mx, &wait, &ser.Instance, &ser.User,
			&groups, &ser.Verb, &ser.APIGroup, &ser.Resource, &ser.Subresource, &ser.Namespace, &ser.NonResourceURL, &ser.Class); err != nil {
			return nil, fmt.Errorf("ledger: traffic: %w", err)
		}
		g, ok := groupsOf[groups]
		if !ok {
			if err := json.Unmarshal([]byte(groups), &g); err != nil {
				return nil, fmt.Errorf("ledger: traffic: series %d: groups: %w", series, err)
			}
			groupsOf[groups] = g
		}
		ser.Groups = g
		r.b.Start, r.b.Width = time.Unix(start, 0).UTC(), time.Duration(widthS)*time.Second
		r.b.LatencySum, r.b.LatencyMax, r.b.APFWaitSum = time.Duration(sum), time.Duration(mx), time.Duration(wait)
		r.key = [3]int64{start, series, widthS}
		page = append(page, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: traffic: %w", err)
	}
	return page, nil
}

// TrafficStats counts the buckets and series.
func (s *sqlStore) TrafficStats(ctx context.Context) (TrafficStats, error) {
	st := TrafficStats{Retention: s.trafficRetention, MaxBuckets: s.maxTrafficBuckets,
		PrunedForSize: s.tc.prunedSize.Load(), PrunedForAge: s.tc.prunedAge.Load(), Coarsened: s.tc.coarsened.Load()}
	var oldest, newest sql.NullInt64
	err := s.r.QueryRowContext(ctx, "SELECT count(*), min(start_s), max(start_s) FROM traffic_buckets").Scan(&st.Buckets, &oldest, &newest)
	if err == nil {
		err = s.r.QueryRowContext(ctx, "SELECT count(*) FROM traffic_series").Scan(&st.Series)
	}
	if err != nil {
		return TrafficStats{}, fmt.Errorf("ledger: traffic: stats: %w", err)
	}
	if oldest.Valid {
		st.Oldest, st.Newest = time.Unix(oldest.Int64, 0).UTC(), time.Unix(newest.Int64, 0).UTC()
	}
	return st, nil
}
