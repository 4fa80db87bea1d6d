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

// ScanTraffic reads keyset pages of unpacked buckets and packed minutes,
// a minute of packed rows at a time, and hands each bucket to each in key
// order once its page is read and the connection given back. A second
// stored in both (a late one not packed yet) is handed out once, added up.
func (s *sqlStore) ScanTraffic(ctx context.Context, q TrafficQuery, each func(*TrafficBucket) error) error {
	since, until := int64(-1<<62), int64(1<<62)
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
	series := map[int64]*TrafficSeries{}
	// The key just before since's first: (since, -1, -1) < (since, id, width).
	rows := &bucketRows{s: s, query: s.d.bind(scanTrafficSQL), after: [3]int64{since, -1, -1}, until: until, series: series}
	packed := &packedMinutes{s: s, query: s.d.bind(scanPackedSQL), since: since, until: until,
		after: [2]int64{since - mod(since, 60), -1}, series: series}
	var b TrafficBucket
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := rows.peek(ctx)
		if err != nil {
			return err
		}
		p, err := packed.peek(ctx)
		if err != nil {
			return err
		}
		if r == nil && p == nil {
			return nil
		}
		var pk [3]int64
		if p != nil {
			pk = [3]int64{packed.minute + p.off, p.series, 1}
		}
		switch {
		case p == nil || (r != nil && keyLess(r.key, pk)):
			b = r.b
			rows.pos++
		case r == nil || keyLess(pk, r.key):
			p.bucketOf(&b, packed.minute, p.series)
			packed.pos++
		default:
			sl := slotOfBucket(&r.b, p.off)
			sl.add(&p.slot)
			sl.bucketOf(&b, packed.minute, p.series)
			rows.pos++
			packed.pos++
		}
		ser, ok := series[b.SeriesID]
		if !ok {
			// Pruned between the page and its series: the
			// retention's, gone with its buckets.
			continue
		}
		b.Series = *ser
		if err := each(&b); err != nil {
			return err
		}
	}
}

func keyLess(a, b [3]int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// bucketRows reads traffic_buckets a keyset page at a time.
type bucketRows struct {
	s      *sqlStore
	query  string
	after  [3]int64
	until  int64
	series map[int64]*TrafficSeries
	page   []trafficRow
	pos    int
	done   bool
}

// peek is the next row, nil past the last.
func (br *bucketRows) peek(ctx context.Context) (*trafficRow, error) {
	if br.pos < len(br.page) {
		return &br.page[br.pos], nil
	}
	if br.done {
		return nil, nil
	}
	page, err := br.s.trafficPage(ctx, br.query, br.after, br.until, br.page[:0])
	if err != nil {
		return nil, err
	}
	br.page, br.pos, br.done = page, 0, len(page) < trafficPage
	if len(page) == 0 {
		return nil, nil
	}
	br.after = page[len(page)-1].key
	ids := make([]int64, len(page))
	for i := range page {
		ids[i] = page[i].key[1]
	}
	if err := br.s.readSeries(ctx, ids, br.series); err != nil {
		return nil, err
	}
	return &br.page[0], nil
}

// scanPackedSQL reads one page of packed minutes by keyset.
const scanPackedSQL = "SELECT minute_s, series_id, slots FROM traffic_minutes WHERE (minute_s, series_id) > (?, ?) AND minute_s < ? " +
	"ORDER BY minute_s, series_id LIMIT ?"

// packedPage is how many packed rows one page reads: a busy cluster's
// minute is a few hundred.
const packedPage = 1000

// packedMinutes reads traffic_minutes a minute at a time (however many
// pages it spans: a packed row holds its seconds by series, and they are
// handed out by second), its seconds sorted by (second, series).
type packedMinutes struct {
	s            *sqlStore
	query        string
	since, until int64
	after        [2]int64
	series       map[int64]*TrafficSeries
	pending      []packedRow // read, of this minute and maybe the next
	done         bool
	minute       int64
	slots        []seriesSlot // the minute's, in order; pos..end in the window
	pos, end     int
	decoded      []slot
}

type packedRow struct {
	minute, series int64
	blob           []byte
}

type seriesSlot struct {
	series int64
	slot
}

func (pm *packedMinutes) peek(ctx context.Context) (*seriesSlot, error) {
	for pm.pos >= pm.end {
		if pm.done && len(pm.pending) == 0 {
			return nil, nil
		}
		if err := pm.nextMinute(ctx); err != nil {
			return nil, err
		}
	}
	return &pm.slots[pm.pos], nil
}

// nextMinute reads the next minute's rows whole and sorts its seconds.
func (pm *packedMinutes) nextMinute(ctx context.Context) error {
	pm.pos, pm.end = 0, 0
	for !pm.done && (len(pm.pending) == 0 || pm.pending[len(pm.pending)-1].minute == pm.pending[0].minute) {
		if err := pm.readPage(ctx); err != nil {
			return err
		}
	}
	if len(pm.pending) == 0 {
		return nil
	}
	pm.minute = pm.pending[0].minute
	n := 0
	for n < len(pm.pending) && pm.pending[n].minute == pm.minute {
		n++
	}
	rows := pm.pending[:n]
	// Decoded in row (series) order, then counting-sorted by second: each
	// second's slots stay in series order.
	pm.decoded = pm.decoded[:0]
	var perOff [61]int
	ids := make([]int64, n)
	for i := range rows {
		var err error
		from := len(pm.decoded)
		if pm.decoded, err = decodeSlots(pm.decoded, rows[i].blob); err != nil {
			return err
		}
		for j := from; j < len(pm.decoded); j++ {
			pm.decoded[j].owner = i
			perOff[pm.decoded[j].off+1]++
		}
		ids[i] = rows[i].series
	}
	for i := 1; i < len(perOff); i++ {
		perOff[i] += perOff[i-1]
	}
	pm.slots = slices.Grow(pm.slots[:0], len(pm.decoded))[:len(pm.decoded)]
	for _, d := range pm.decoded {
		pm.slots[perOff[d.off]] = seriesSlot{series: rows[d.owner].series, slot: d}
		perOff[d.off]++
	}
	// The window's edges.
	pm.pos, pm.end = 0, len(pm.slots)
	for pm.pos < pm.end && pm.minute+pm.slots[pm.pos].off < pm.since {
		pm.pos++
	}
	for pm.end > pm.pos && pm.minute+pm.slots[pm.end-1].off >= pm.until {
		pm.end--
	}
	pm.pending = append(pm.pending[:0], pm.pending[n:]...)
	return pm.s.readSeries(ctx, ids, pm.series)
}

// readPage appends a keyset page of packed rows to pending.
func (pm *packedMinutes) readPage(ctx context.Context) error {
	s := pm.s
	select {
	case s.exportSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.exportSlots }()
	rows, err := s.r.QueryContext(ctx, pm.query, pm.after[0], pm.after[1], pm.until, packedPage)
	if err != nil {
		return fmt.Errorf("ledger: traffic: %w", err)
	}
	defer rows.Close()
	got := 0
	for rows.Next() {
		var r packedRow
		if err := rows.Scan(&r.minute, &r.series, &r.blob); err != nil {
			return fmt.Errorf("ledger: traffic: %w", err)
		}
		pm.pending = append(pm.pending, r)
		got++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("ledger: traffic: %w", err)
	}
	pm.done = got < packedPage
	if got > 0 {
		last := pm.pending[len(pm.pending)-1]
		pm.after = [2]int64{last.minute, last.series}
	}
	return nil
}

// trafficRow is one bucket of a page and its key.
type trafficRow struct {
	b   TrafficBucket
	key [3]int64
}

func (s *sqlStore) trafficPage(ctx context.Context, query string, after [3]int64, until int64, page []trafficRow) ([]trafficRow, error) {
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

// readSeries adds to known the series of ids it lacks, a batch
// of ids per query. Series with the same groups share one slice.
func (s *sqlStore) readSeries(ctx context.Context, ids []int64, known map[int64]*TrafficSeries) error {
	var missing []any
	asked := map[int64]bool{}
	for _, id := range ids {
		if known[id] == nil && !asked[id] {
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
