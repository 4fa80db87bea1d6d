package ledger

import (
	"context"
	"crypto/sha256"
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
	// packUntil: the second buckets before it were packed into minutes
	// (traffic_pack.go) by this store, but for those appended late since,
	// the oldest at lateFrom (hasLate), which the next pack looks at again.
	packUntil int64
	hasLate   bool
	lateFrom  int64
	packed    atomic.Int64
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
	"latency_max_ns, apf_wait_sum_ns, served_latency_sum_ns, served_latency_min_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) " +
	"ON CONFLICT (start_s, series_id, width_s) DO UPDATE SET " + bucketSums

// upsertRejectionsSQL adds a minute's 429s (TrafficRejections).
const upsertRejectionsSQL = "INSERT INTO traffic_rejections (minute_s, rejected) VALUES (?, ?) ON CONFLICT (minute_s) " +
	"DO UPDATE SET rejected = traffic_rejections.rejected + excluded.rejected"

// bucketSums is the conflict clause's sums, shared with the coarsening.
const bucketSums = "requests = traffic_buckets.requests + excluded.requests, " +
	"rejected = traffic_buckets.rejected + excluded.rejected, " +
	"latency_sum_ns = traffic_buckets.latency_sum_ns + excluded.latency_sum_ns, " +
	"latency_max_ns = CASE WHEN excluded.latency_max_ns > traffic_buckets.latency_max_ns " +
	"THEN excluded.latency_max_ns ELSE traffic_buckets.latency_max_ns END, " +
	"apf_wait_sum_ns = traffic_buckets.apf_wait_sum_ns + excluded.apf_wait_sum_ns, " +
	"served_latency_sum_ns = traffic_buckets.served_latency_sum_ns + excluded.served_latency_sum_ns, " +
	servedMin

// servedMin keeps the smaller positive served minimum: 0 is "no served
// request", so a batch of 429s only must not erase the stored minimum and a
// bucket stored without one takes the first that comes (neither a plain
// min nor least() would: min(0, x) = 0).
const servedMin = "served_latency_min_ns = CASE WHEN excluded.served_latency_min_ns > 0 AND " +
	"(traffic_buckets.served_latency_min_ns <= 0 OR excluded.served_latency_min_ns < traffic_buckets.served_latency_min_ns) " +
	"THEN excluded.served_latency_min_ns ELSE traffic_buckets.served_latency_min_ns END"

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
	packUntil, err := s.packMark(ctx)
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
	ids := map[string]seriesSeen{}  // upserted by this batch, remembered once committed
	rejectedIn := map[int64]int64{} // the batch's 429s per minute
	late := int64(1<<63 - 1)        // the oldest second behind the pack's mark
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
		if width == 1 && start < packUntil {
			// Its minute was packed: the next pack merges it in.
			late = min(late, start)
		}
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
			int64(b.LatencyMax), int64(b.APFWaitSum), int64(b.ServedLatencySum), max(int64(b.ServedLatencyMin), 0)); err != nil {
			return fmt.Errorf("ledger: traffic: bucket: %w", err)
		}
		if b.Rejected > 0 {
			rejectedIn[start-start%60] += b.Rejected
		}
	}
	for minute, n := range rejectedIn {
		if _, err := tx.ExecContext(ctx, s.d.bind(upsertRejectionsSQL), minute, n); err != nil {
			return fmt.Errorf("ledger: traffic: rejections: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("ledger: traffic: commit: %w", err)
	}
	if late != 1<<63-1 {
		s.noteLate(late)
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

// TrafficStats counts the buckets (a packed minute's seconds each) and
// series.
func (s *sqlStore) TrafficStats(ctx context.Context) (TrafficStats, error) {
	st := TrafficStats{Retention: s.trafficRetention, MaxBuckets: s.maxTrafficBuckets,
		PrunedForSize: s.tc.prunedSize.Load(), PrunedForAge: s.tc.prunedAge.Load(), Coarsened: s.tc.coarsened.Load(), Packed: s.tc.packed.Load()}
	var err error
	if st.Buckets, err = s.countBuckets(ctx, -1<<63, 1<<63-1); err != nil {
		return TrafficStats{}, err
	}
	if err = s.r.QueryRowContext(ctx, "SELECT count(*) FROM traffic_series").Scan(&st.Series); err != nil {
		return TrafficStats{}, fmt.Errorf("ledger: traffic: stats: %w", err)
	}
	oldest, newest, err := s.trafficSpan(ctx)
	if err != nil {
		return TrafficStats{}, err
	}
	if oldest != nil {
		st.Oldest, st.Newest = time.Unix(*oldest, 0).UTC(), time.Unix(*newest, 0).UTC()
	}
	return st, nil
}
