package ledger

// Reading the recorded traffic: a window's buckets in time order, streamed.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// scanTrafficSQL reads one page of buckets by keyset on the primary key,
// without their series: a series is read once per scan (seriesByIDSQL),
// not joined into each of its buckets (a day of a busy cluster is tens of
// millions of buckets of a few thousand series).
const scanTrafficSQL = "SELECT b.start_s, b.series_id, b.width_s, b.requests, b.rejected, b.latency_sum_ns, b.latency_max_ns, " +
	"b.apf_wait_sum_ns, b.served_latency_sum_ns, b.served_latency_min_ns FROM traffic_buckets b " +
	"WHERE (b.start_s, b.series_id, b.width_s) > (?, ?, ?) AND b.start_s < ? ORDER BY b.start_s, b.series_id, b.width_s LIMIT ?"

// seriesByIDSQL reads series by id; the IN list is appended.
const seriesByIDSQL = "SELECT id, instance, user_name, groups_json, verb, api_group, resource, subresource, namespace, " +
	"non_resource_url, class FROM traffic_series WHERE id IN ("

// seriesBatch is how many series one seriesByIDSQL reads at most.
const seriesBatch = 500

// trafficPage is how many buckets one page of a scan reads.
const trafficPage = 5000

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
	series := map[int64]*TrafficSeries{}
	for {
		page, err := s.trafficPage(ctx, query, after, until)
		if err != nil {
			return err
		}
		if err := s.readSeries(ctx, page, series); err != nil {
			return err
		}
		for i := range page {
			if err := ctx.Err(); err != nil {
				return err
			}
			ser, ok := series[page[i].key[1]]
			if !ok {
				// Pruned between the page and its series: the
				// retention's, gone with its buckets.
				continue
			}
			page[i].b.Series = *ser
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
	for rows.Next() {
		var (
			r                     trafficRow
			sum, mx, wait         int64
			servedSum, servedMin  int64
			start, series, widthS int64
		)
		if err := rows.Scan(&start, &series, &widthS, &r.b.Requests, &r.b.Rejected, &sum, &mx, &wait, &servedSum, &servedMin); err != nil {
			return nil, fmt.Errorf("ledger: traffic: %w", err)
		}
		r.b.Start, r.b.Width, r.b.SeriesID = time.Unix(start, 0).UTC(), time.Duration(widthS)*time.Second, series
		r.b.LatencySum, r.b.LatencyMax, r.b.APFWaitSum = time.Duration(sum), time.Duration(mx), time.Duration(wait)
		r.b.ServedLatencySum, r.b.ServedLatencyMin = time.Duration(servedSum), time.Duration(servedMin)
		r.key = [3]int64{start, series, widthS}
		page = append(page, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: traffic: %w", err)
	}
	return page, nil
}

// readSeries adds to known the series of page's buckets it lacks, a batch
// of ids per query. Series with the same groups share one slice.
func (s *sqlStore) readSeries(ctx context.Context, page []trafficRow, known map[int64]*TrafficSeries) error {
	var missing []any
	asked := map[int64]bool{}
	for i := range page {
		if id := page[i].key[1]; known[id] == nil && !asked[id] {
			asked[id] = true
			missing = append(missing, id)
		}
	}
	groupsOf := map[string][]string{}
	for len(missing) > 0 {
		n := min(len(missing), seriesBatch)
		if err := s.readSeriesBatch(ctx, missing[:n], known, groupsOf); err != nil {
			return err
		}
		missing = missing[n:]
	}
	return nil
}

func (s *sqlStore) readSeriesBatch(ctx context.Context, ids []any, known map[int64]*TrafficSeries, groupsOf map[string][]string) error {
	select {
	case s.exportSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.exportSlots }()
	query := s.d.bind(seriesByIDSQL + strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ") + ")")
	rows, err := s.r.QueryContext(ctx, query, ids...)
	if err != nil {
		return fmt.Errorf("ledger: traffic series: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id     int64
			groups string
			ser    TrafficSeries
		)
		if err := rows.Scan(&id, &ser.Instance, &ser.User, &groups, &ser.Verb, &ser.APIGroup, &ser.Resource, &ser.Subresource,
			&ser.Namespace, &ser.NonResourceURL, &ser.Class); err != nil {
			return fmt.Errorf("ledger: traffic series: %w", err)
		}
		g, ok := groupsOf[groups]
		if !ok {
			if err := json.Unmarshal([]byte(groups), &g); err != nil {
				return fmt.Errorf("ledger: traffic: series %d: groups: %w", id, err)
			}
			groupsOf[groups] = g
		}
		ser.Groups = g
		known[id] = &ser
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("ledger: traffic series: %w", err)
	}
	return nil
}

// TrafficRejections reads the newest minutes with 429s from since.
func (s *sqlStore) TrafficRejections(ctx context.Context, since time.Time) ([]MinuteRejections, error) {
	rows, err := s.r.QueryContext(ctx, s.d.bind("SELECT minute_s, rejected FROM traffic_rejections WHERE minute_s >= ? "+
		"ORDER BY minute_s DESC LIMIT ?"), since.Unix()-since.Unix()%60, MaxRejectionMinutes)
	if err != nil {
		return nil, fmt.Errorf("ledger: traffic rejections: %w", err)
	}
	defer rows.Close()
	var out []MinuteRejections
	for rows.Next() {
		var m, n int64
		if err := rows.Scan(&m, &n); err != nil {
			return nil, fmt.Errorf("ledger: traffic rejections: %w", err)
		}
		out = append(out, MinuteRejections{Minute: time.Unix(m, 0).UTC(), Rejected: n})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: traffic rejections: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}
