package ledger_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

func trafficStore(t *testing.T, dsn string, o ledger.Options) ledger.TrafficStore {
	t.Helper()
	ts, ok := open(t, dsn, o).(ledger.TrafficStore)
	if !ok {
		t.Fatal("the store keeps no traffic")
	}
	return ts
}

var tt0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func listSeries(user string) ledger.TrafficSeries {
	return ledger.TrafficSeries{Instance: "127.0.0.1:6443", User: user, Groups: []string{"system:authenticated", "dev"},
		Verb: "list", Resource: "configmaps", Namespace: "team"}
}

func bucketAt(sec int, s ledger.TrafficSeries, n int64, lat time.Duration) ledger.TrafficBucket {
	return ledger.TrafficBucket{Start: tt0.Add(time.Duration(sec) * time.Second), Width: ledger.TrafficSecond, Series: s,
		Requests: n, LatencySum: time.Duration(n) * lat, LatencyMax: lat}
}

func scanTraffic(t *testing.T, ts ledger.TrafficStore, q ledger.TrafficQuery) []ledger.TrafficBucket {
	t.Helper()
	var out []ledger.TrafficBucket
	if err := ts.ScanTraffic(context.Background(), q, func(b *ledger.TrafficBucket) error {
		out = append(out, *b)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTrafficUpsertsAddUp: a second batch with the same series and second
// adds its counts (sums added, maximum kept), a new second or series is a
// row of its own, and the series reads back as stored, groups included.
func TestTrafficUpsertsAddUp(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ts := trafficStore(t, dsn, ledger.Options{})
		ctx := context.Background()
		alice, bob := listSeries("alice"), listSeries("bob")
		b1 := bucketAt(0, alice, 3, 10*time.Millisecond)
		b1.Rejected, b1.APFWaitSum = 1, time.Second
		if err := ts.AppendTraffic(ctx, []ledger.TrafficBucket{b1, bucketAt(0, bob, 1, time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
		if err := ts.AppendTraffic(ctx, []ledger.TrafficBucket{bucketAt(0, alice, 2, 50*time.Millisecond), bucketAt(1, alice, 1, time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
		got := scanTraffic(t, ts, ledger.TrafficQuery{})
		if len(got) != 3 {
			t.Fatalf("%d buckets, want 3: %+v", len(got), got)
		}
		a0 := got[0]
		if a0.Series.User != "alice" {
			a0 = got[1]
		}
		if a0.Requests != 5 || a0.Rejected != 1 || a0.LatencySum != 130*time.Millisecond || a0.LatencyMax != 50*time.Millisecond ||
			a0.APFWaitSum != time.Second || !a0.Start.Equal(tt0) || a0.Width != time.Second {
			t.Errorf("alice's first second = %+v", a0)
		}
		if !reflect.DeepEqual(a0.Series, alice) {
			t.Errorf("series read back %+v, stored %+v", a0.Series, alice)
		}
		if !got[2].Start.Equal(tt0.Add(time.Second)) || got[2].Requests != 1 {
			t.Errorf("the next second = %+v", got[2])
		}
		// The scan names each bucket's stored series: alice's two seconds
		// share one id, bob's is another.
		if got[2].SeriesID != a0.SeriesID || got[0].SeriesID == got[1].SeriesID || a0.SeriesID == 0 {
			t.Errorf("series ids %d %d %d", got[0].SeriesID, got[1].SeriesID, got[2].SeriesID)
		}
		st, err := ts.TrafficStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Buckets != 3 || st.Series != 2 {
			t.Errorf("stats %+v, want 3 buckets of 2 series", st)
		}
	})
}

// TestTrafficScanStreamsAWindowInTimeOrder: more buckets than a page, read
// in time order, only the window's, and a scan stops at each's error.
func TestTrafficScanStreamsAWindowInTimeOrder(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ts := trafficStore(t, dsn, ledger.Options{})
		ctx := context.Background()
		var batch []ledger.TrafficBucket
		for sec := 0; sec < 120; sec++ {
			for u := 0; u < 20; u++ { // 2,400 buckets: more than two pages
				batch = append(batch, bucketAt(sec, listSeries(fmt.Sprintf("user-%02d", u)), 1, time.Millisecond))
			}
		}
		if err := ts.AppendTraffic(ctx, batch); err != nil {
			t.Fatal(err)
		}
		got := scanTraffic(t, ts, ledger.TrafficQuery{Since: tt0.Add(10 * time.Second), Until: tt0.Add(110 * time.Second)})
		if len(got) != 100*20 {
			t.Fatalf("%d buckets in the window, want 2000", len(got))
		}
		for i := 1; i < len(got); i++ {
			if got[i].Start.Before(got[i-1].Start) {
				t.Fatalf("bucket %d at %s after one at %s", i, got[i].Start, got[i-1].Start)
			}
		}
		if !got[0].Start.Equal(tt0.Add(10*time.Second)) || !got[len(got)-1].Start.Equal(tt0.Add(109*time.Second)) {
			t.Errorf("window read from %s to %s", got[0].Start, got[len(got)-1].Start)
		}
		stop := fmt.Errorf("enough")
		n := 0
		err := ts.ScanTraffic(ctx, ledger.TrafficQuery{}, func(*ledger.TrafficBucket) error {
			n++
			if n == 5 {
				return stop
			}
			return nil
		})
		if err != stop || n != 5 {
			t.Errorf("scan after each's error: %v after %d buckets", err, n)
		}
	})
}

// TestTrafficCoarsensPastADayIntoMinutes: second buckets before the cut are
// folded into minute buckets per series (sums added, maximum kept), those
// after it stay seconds, and a late second bucket before the cut is stored
// as its minute.
func TestTrafficCoarsensPastADayIntoMinutes(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ts := trafficStore(t, dsn, ledger.Options{})
		ctx := context.Background()
		alice := listSeries("alice")
		var batch []ledger.TrafficBucket
		for sec := 0; sec < 180; sec++ { // three minutes, 1..3 requests a second
			batch = append(batch, bucketAt(sec, alice, int64(sec%3+1), time.Duration(sec+1)*time.Millisecond))
		}
		if err := ts.AppendTraffic(ctx, batch); err != nil {
			t.Fatal(err)
		}
		n, err := ts.CoarsenTraffic(ctx, tt0.Add(2*time.Minute+30*time.Second)) // rounded down to 2 minutes
		if err != nil {
			t.Fatal(err)
		}
		if n != 120 {
			t.Errorf("coarsened %d second buckets, want 120", n)
		}
		late := bucketAt(30, alice, 7, time.Hour)
		if err := ts.AppendTraffic(ctx, []ledger.TrafficBucket{late}); err != nil {
			t.Fatal(err)
		}
		got := scanTraffic(t, ts, ledger.TrafficQuery{})
		if len(got) != 2+60 {
			t.Fatalf("%d buckets, want 2 minutes and 60 seconds", len(got))
		}
		m0, m1 := got[0], got[1]
		// Each minute: 20 seconds each of 1, 2 and 3 requests = 120.
		if m0.Width != time.Minute || !m0.Start.Equal(tt0) || m0.Requests != 120+7 || m0.LatencyMax != time.Hour {
			t.Errorf("first minute = %+v", m0)
		}
		var sum time.Duration
		for sec := 60; sec < 120; sec++ {
			sum += time.Duration(sec%3+1) * time.Duration(sec+1) * time.Millisecond
		}
		if m1.Width != time.Minute || !m1.Start.Equal(tt0.Add(time.Minute)) || m1.Requests != 120 || m1.LatencySum != sum || m1.LatencyMax != 120*time.Millisecond {
			t.Errorf("second minute = %+v, want 120 requests, latency sum %s, max 120ms", m1, sum)
		}
		if got[2].Width != time.Second || !got[2].Start.Equal(tt0.Add(2*time.Minute)) {
			t.Errorf("after the cut: %+v", got[2])
		}
		// Again: nothing left to fold.
		if n, err := ts.CoarsenTraffic(ctx, tt0.Add(2*time.Minute)); err != nil || n != 0 {
			t.Errorf("second coarsening: %d, %v", n, err)
		}
	})
}

// TestTrafficBounds: the retention prunes buckets and the series left
// without any; the size bound drops the oldest seconds once a hundredth of
// it was added, each counted.
func TestTrafficBounds(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ts := trafficStore(t, dsn, ledger.Options{MaxTrafficBuckets: 100})
		ctx := context.Background()
		for sec := 0; sec < 150; sec++ {
			if err := ts.AppendTraffic(ctx, []ledger.TrafficBucket{bucketAt(sec, listSeries("alice"), 1, time.Millisecond)}); err != nil {
				t.Fatal(err)
			}
		}
		st, err := ts.TrafficStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Buckets != 100 || st.PrunedForSize != 50 || !st.Oldest.Equal(tt0.Add(50*time.Second)) {
			t.Errorf("after 150 seconds with a bound of 100: %+v", st)
		}
		if err := ts.AppendTraffic(ctx, []ledger.TrafficBucket{bucketAt(7200, listSeries("bob"), 1, time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
		// A series' last_s is its newest bucket's hour's end (series are
		// upserted once an hour): alice's goes with a cut past 10:59:59.
		n, err := ts.PruneTraffic(ctx, tt0.Add(time.Hour+160*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		st, err = ts.TrafficStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// bob's bucket was the 101st: alice's oldest went for size first.
		if n != 99 || st.Buckets != 1 || st.Series != 1 || st.PrunedForAge != 99 || st.PrunedForSize != 51 {
			t.Errorf("pruned %d; then %+v: want bob's one bucket and series", n, st)
		}
	})
}

// TestTrafficKeepsAnyName: 253-character names, invalid UTF-8 and NUL are
// stored as every other value of the ledger is (storable.go), and a series
// differs from another by any one field.
func TestTrafficKeepsAnyName(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ts := trafficStore(t, dsn, ledger.Options{})
		ctx := context.Background()
		long := listSeries(strings.Repeat("u", 253))
		long.Namespace = strings.Repeat("n", 253)
		odd := listSeries("bad\xffname\x00")
		group := listSeries("alice")
		group.Groups = []string{"other"}
		if err := ts.AppendTraffic(ctx, []ledger.TrafficBucket{bucketAt(0, long, 1, 0), bucketAt(0, odd, 1, 0),
			bucketAt(0, listSeries("alice"), 1, 0), bucketAt(0, group, 1, 0)}); err != nil {
			t.Fatal(err)
		}
		got := scanTraffic(t, ts, ledger.TrafficQuery{})
		if len(got) != 4 {
			t.Fatalf("%d buckets, want 4", len(got))
		}
		users := map[string]bool{}
		for _, b := range got {
			users[b.Series.User] = true
		}
		if !users[strings.Repeat("u", 253)] || !users["bad\uFFFDname\u2400"] {
			t.Errorf("users read back: %v", users)
		}
	})
}

// TestTrafficSeriesComeBackAfterAPrune: a series the store remembers and a
// prune deleted is stored again when its traffic comes back, even a late
// bucket within the hour the store remembered it for: no bucket is left
// pointing at a series that is gone (the scan would drop it).
func TestTrafficSeriesComeBackAfterAPrune(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ts := trafficStore(t, dsn, ledger.Options{})
		ctx := context.Background()
		if err := ts.AppendTraffic(ctx, []ledger.TrafficBucket{bucketAt(0, listSeries("alice"), 1, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := ts.PruneTraffic(ctx, tt0.Add(time.Hour+time.Minute)); err != nil {
			t.Fatal(err)
		}
		if err := ts.AppendTraffic(ctx, []ledger.TrafficBucket{bucketAt(100, listSeries("alice"), 2, 0)}); err != nil {
			t.Fatal(err)
		}
		got := scanTraffic(t, ts, ledger.TrafficQuery{})
		if len(got) != 1 || got[0].Requests != 2 || got[0].Series.User != "alice" {
			t.Errorf("after the prune and alice's late bucket: %+v", got)
		}
	})
}

// servedAt is a bucket of s's requests at second sec as the fold makes it:
// rejected 429s at no latency and a served request for each of served.
func servedAt(sec int, s ledger.TrafficSeries, rejected int64, served ...time.Duration) ledger.TrafficBucket {
	b := ledger.TrafficBucket{Start: tt0.Add(time.Duration(sec) * time.Second), Width: ledger.TrafficSecond, Series: s,
		Requests: rejected + int64(len(served)), Rejected: rejected}
	for _, lat := range served {
		b.LatencySum += lat
		b.LatencyMax = max(b.LatencyMax, lat)
		b.ServedLatencySum += lat
		if b.ServedLatencyMin == 0 || lat < b.ServedLatencyMin {
			b.ServedLatencyMin = lat
		}
	}
	return b
}

// TestTrafficServedLatencyUpserts: batches adding to one bucket add the
// served latencies' sums and keep the smallest positive minimum: a larger
// one does not raise it, a batch without a served request (minimum 0,
// none) does not erase it, and a bucket stored without one takes the
// first positive minimum that comes (0 is none, not the smallest).
func TestTrafficServedLatencyUpserts(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ts := trafficStore(t, dsn, ledger.Options{})
		ctx := context.Background()
		alice, bob := listSeries("alice"), listSeries("bob")
		ms := time.Millisecond
		for _, batch := range [][]ledger.TrafficBucket{
			{servedAt(0, alice, 1, 10*ms, 20*ms), servedAt(0, bob, 3)},
			{servedAt(0, alice, 0, 5*ms), servedAt(0, bob, 0, 40*ms, 30*ms)},
			{servedAt(0, alice, 2), servedAt(0, bob, 0, 35*ms)},
			{servedAt(0, alice, 0, 8*ms)},
		} {
			if err := ts.AppendTraffic(ctx, batch); err != nil {
				t.Fatal(err)
			}
		}
		got := map[string]ledger.TrafficBucket{}
		for _, b := range scanTraffic(t, ts, ledger.TrafficQuery{}) {
			got[b.Series.User] = b
		}
		a, b := got["alice"], got["bob"]
		if a.Requests != 7 || a.Rejected != 3 || a.LatencySum != 43*ms || a.LatencyMax != 20*ms ||
			a.ServedLatencySum != 43*ms || a.ServedLatencyMin != 5*ms {
			t.Errorf("alice: %+v, want 7 requests, 3 rejected, served sum 43ms, min 5ms", a)
		}
		if b.Requests != 6 || b.Rejected != 3 || b.ServedLatencySum != 105*ms || b.ServedLatencyMin != 30*ms {
			t.Errorf("bob: %+v, want 6 requests, 3 rejected, served sum 105ms, min 30ms", b)
		}
	})
}

// TestTrafficCoarseningKeepsTheServedMin: a minute folded from seconds sums
// their served sums and takes the smallest positive minimum (0 when no
// second had one); a late second stored as its minute merges the same way.
func TestTrafficCoarseningKeepsTheServedMin(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ts := trafficStore(t, dsn, ledger.Options{})
		ctx := context.Background()
		alice := listSeries("alice")
		ms := time.Millisecond
		var batch []ledger.TrafficBucket
		var sum time.Duration
		for sec := 0; sec < 60; sec++ { // first minute: served mins 60ms down to 11ms, every third second only 429s
			if sec%3 == 0 {
				batch = append(batch, servedAt(sec, alice, 2))
				continue
			}
			lat := time.Duration(70-sec) * ms
			batch = append(batch, servedAt(sec, alice, 0, lat, lat+ms))
			sum += 2*lat + ms
		}
		for sec := 60; sec < 120; sec++ { // second minute: only 429s
			batch = append(batch, servedAt(sec, alice, 1))
		}
		batch = append(batch, servedAt(120, alice, 0, ms)) // third minute: stays a second
		if err := ts.AppendTraffic(ctx, batch); err != nil {
			t.Fatal(err)
		}
		if n, err := ts.CoarsenTraffic(ctx, tt0.Add(2*time.Minute)); err != nil || n != 120 {
			t.Fatalf("coarsened %d, %v; want 120 seconds", n, err)
		}
		got := scanTraffic(t, ts, ledger.TrafficQuery{})
		if len(got) != 3 {
			t.Fatalf("%d buckets, want 2 minutes and a second: %+v", len(got), got)
		}
		if m := got[0]; m.Width != time.Minute || m.ServedLatencySum != sum || m.ServedLatencyMin != 11*ms {
			t.Errorf("first minute = %+v, want served sum %s, min 11ms", m, sum)
		}
		if m := got[1]; m.Width != time.Minute || m.Requests != 60 || m.ServedLatencySum != 0 || m.ServedLatencyMin != 0 {
			t.Errorf("second minute = %+v, want no served latency", m)
		}
		if s := got[2]; s.Width != time.Second || s.ServedLatencyMin != ms {
			t.Errorf("after the cut: %+v", s)
		}
		// Late seconds behind the mark: stored as their minute, a smaller
		// minimum taken, a 429-only second erasing nothing.
		if err := ts.AppendTraffic(ctx, []ledger.TrafficBucket{servedAt(10, alice, 0, 3*ms), servedAt(70, alice, 0, 9*ms),
			servedAt(80, alice, 4)}); err != nil {
			t.Fatal(err)
		}
		got = scanTraffic(t, ts, ledger.TrafficQuery{})
		if m := got[0]; m.ServedLatencyMin != 3*ms || m.ServedLatencySum != sum+3*ms {
			t.Errorf("first minute after a late second = %+v, want min 3ms", m)
		}
		if m := got[1]; m.ServedLatencyMin != 9*ms || m.ServedLatencySum != 9*ms || m.Requests != 65 {
			t.Errorf("second minute after late seconds = %+v, want min 9ms", m)
		}
	})
}

// TestTrafficRejectionsPerMinute: the 429s of every batch are added up per
// minute (only minutes with any), read back in time order from a time on,
// and pruned with the buckets of their minute.
func TestTrafficRejectionsPerMinute(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		ts := trafficStore(t, dsn, ledger.Options{})
		ctx := context.Background()
		withRejected := func(sec int, user string, requests, rejected int64) ledger.TrafficBucket {
			b := bucketAt(sec, listSeries(user), requests, time.Millisecond)
			b.Rejected = rejected
			return b
		}
		if err := ts.AppendTraffic(ctx, []ledger.TrafficBucket{withRejected(0, "a", 10, 3), withRejected(5, "b", 10, 2),
			withRejected(61, "a", 5, 0), withRejected(130, "a", 9, 9)}); err != nil {
			t.Fatal(err)
		}
		if err := ts.AppendTraffic(ctx, []ledger.TrafficBucket{withRejected(59, "a", 4, 4)}); err != nil {
			t.Fatal(err)
		}
		got, err := ts.TrafficRejections(ctx, tt0)
		if err != nil {
			t.Fatal(err)
		}
		want := []ledger.MinuteRejections{{Minute: tt0, Rejected: 9}, {Minute: tt0.Add(2 * time.Minute), Rejected: 9}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("rejections %+v, want %+v", got, want)
		}
		if got, _ := ts.TrafficRejections(ctx, tt0.Add(90*time.Second)); len(got) != 1 || got[0].Rejected != 9 {
			t.Errorf("from the second minute on: %+v", got)
		}
		if _, err := ts.PruneTraffic(ctx, tt0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if got, _ := ts.TrafficRejections(ctx, time.Time{}); len(got) != 1 || !got[0].Minute.Equal(tt0.Add(2*time.Minute)) {
			t.Errorf("after pruning the first minute: %+v", got)
		}
	})
}
