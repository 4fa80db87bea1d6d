package ledger

// Reading the recorded traffic: a window's buckets in time order, streamed.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// scanTrafficSQL reads one page of buckets by keyset on the primary key,
// each with its series (a join on the series' primary key).
const scanTrafficSQL = "SELECT b.start_s, b.series_id, b.width_s, b.requests, b.rejected, b.latency_sum_ns, b.latency_max_ns, " +
	"b.apf_wait_sum_ns, b.served_latency_sum_ns, b.served_latency_min_ns, s.instance, s.user_name, s.groups_json, s.verb, s.api_group, s.resource, s.subresource, s.namespace, " +
	"s.non_resource_url, s.class FROM traffic_buckets b JOIN traffic_series s ON s.id = b.series_id " +
	"WHERE (b.start_s, b.series_id, b.width_s) > (?, ?, ?) AND b.start_s < ? ORDER BY b.start_s, b.series_id, b.width_s LIMIT ?"

// trafficPage is how many buckets one page of a scan reads.
const trafficPage = 1000

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
			servedSum, servedMin  int64
			groups                string
			start, series, widthS int64
		)
		ser := &r.b.Series
		if err := rows.Scan(&start, &series, &widthS, &r.b.Requests, &r.b.Rejected, &sum, &mx, &wait, &servedSum, &servedMin, &ser.Instance, &ser.User,
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
