package ledger

import (
	"context"
	"time"
)

// Recorded traffic (issue 46): every request the API server's audit webhook
// reports, reads included, folded at ingest (internal/traffic) into counts
// per second per series, the arrivals the APF what-if replays. Not ledger
// entries and not recorded writes: no request is kept one by one.

// Classes of a series, as API Priority and Fairness treats its requests
// (k8s.io/apiserver/pkg/server/filters/priority-and-fairness.go): watches
// are dispatched by APF for their initialisation only; other long-running
// requests (exec, attach, port-forward, proxy, log) bypass it.
const (
	ClassOrdinary    = ""
	ClassWatch       = "watch"
	ClassLongRunning = "long-running"
)

// Bucket widths: a second while the traffic is recent, a minute past
// DefaultTrafficFineFor (CoarsenTraffic).
const (
	TrafficSecond = time.Second
	TrafficMinute = time.Minute
)

// Defaults of the traffic's bounds.
const (
	// DefaultTrafficRetention: the what-if's windows, "the last day", "last
	// week's incident".
	DefaultTrafficRetention = 7 * 24 * time.Hour
	// DefaultTrafficFineFor is how long buckets stay a second wide; older
	// ones are folded into minutes.
	DefaultTrafficFineFor = 24 * time.Hour
	// DefaultMaxTrafficBuckets bounds the buckets by count: about 2.8 GB of
	// SQLite and 8.5 GB of PostgreSQL at the sizes BenchmarkTrafficIngest
	// measured (56 and 169 bytes a bucket); 14 hours of seconds at 1,000
	// requests/s of 1,000 distinct flows every second (the worst spread),
	// days of a cluster whose flows repeat within a second.
	DefaultMaxTrafficBuckets = 50_000_000
)

// TrafficSeries is what a request is counted under: the fields APF
// classifies a request by, its class and the API server instance.
type TrafficSeries struct {
	// Instance names the API server that reported the requests (the audit
	// webhook's path, /apiservers/<instance>); empty when it did not say.
	Instance string
	// User and Groups are the user APF saw (the impersonated one when the
	// request impersonated).
	User           string
	Groups         []string
	Verb           string
	APIGroup       string
	Resource       string
	Subresource    string
	Namespace      string // empty: cluster scope, or a non-resource request
	NonResourceURL string // the path of a non-resource request
	Class          string // Class*
}

// TrafficBucket is one series' requests that arrived within
// [Start, Start+Width).
type TrafficBucket struct {
	Start  time.Time
	Width  time.Duration
	Series TrafficSeries
	// SeriesID is the stored series' id, set by ScanTraffic (and ignored by
	// AppendTraffic): a reader tells series apart by it without comparing
	// their fields bucket after bucket.
	SeriesID int64
	// Requests counts the arrivals, Rejected those answered 429.
	Requests, Rejected int64
	// LatencySum and LatencyMax are of the requests' latency: from the
	// event's requestReceivedTimestamp to its stageTimestamp at
	// ResponseComplete (ResponseStarted for long-running requests).
	LatencySum, LatencyMax time.Duration
	// APFWaitSum sums the API server's apf-queue-wait annotations (written
	// only on requests slower than 500 ms).
	APFWaitSum time.Duration
	// ServedLatencySum and ServedLatencyMin are of the served requests'
	// latency only (answered anything but 429): the what-if's estimate of
	// a request's service time, the time it holds its seats. LatencySum
	// mixes in the 429s, answered at once, and a served request's latency
	// includes its APF queue wait, annotated only past 500 ms. So: in a
	// bucket without 429s, service ≈ ServedLatencySum / (Requests −
	// Rejected); in one with 429s its level was full and its requests
	// waited, service ≈ ServedLatencyMin, the request that waited least.
	// ServedLatencyMin is 0 when no served request had a positive latency
	// (and in buckets recorded before migration 00009, whose
	// ServedLatencySum is 0 too).
	ServedLatencySum, ServedLatencyMin time.Duration
}

// TrafficQuery selects the buckets to scan: Since <= Start < Until (zero:
// no bound).
type TrafficQuery struct {
	Since, Until time.Time
}

// TrafficStats describes the recorded traffic.
type TrafficStats struct {
	Buckets, Series int64
	Oldest, Newest  time.Time
	Retention       time.Duration
	MaxBuckets      int64
	// Since the store opened: buckets pruned past the size bound and past
	// the retention, second buckets folded into minutes, and second buckets
	// packed (PackTraffic).
	PrunedForSize, PrunedForAge, Coarsened, Packed int64
}

// TrafficStore keeps the recorded traffic. The SQL store (both backends)
// implements it.
type TrafficStore interface {
	// AppendTraffic adds the buckets in one transaction: a bucket already
	// stored for the same series, start and width has the counts added.
	AppendTraffic(ctx context.Context, buckets []TrafficBucket) error
	// ScanTraffic calls each for every bucket q selects in time order
	// (start, then series), a page at a time: never the window in memory,
	// no connection held while each runs. each must not keep b past its call.
	ScanTraffic(ctx context.Context, q TrafficQuery, each func(b *TrafficBucket) error) error
	// PackTraffic moves the second buckets of the minutes that end before
	// before into packed minutes (a row per series and minute, its seconds
	// in a blob): the scan reads ~60 times fewer rows. Nothing else changes:
	// every method counts and reads a packed second as the bucket it was.
	// A second reported after its minute was packed is a row of its own
	// until the next pack merges it in: the scan hands the two out added
	// up, TrafficStats and the size bound count it twice meanwhile.
	PackTraffic(ctx context.Context, before time.Time) (int64, error)
	// CoarsenTraffic folds the second buckets that start before before into
	// minute buckets.
	CoarsenTraffic(ctx context.Context, before time.Time) (int64, error)
	// PruneTraffic deletes the buckets that start before before, and the
	// series left without any.
	PruneTraffic(ctx context.Context, before time.Time) (int64, error)
	TrafficStats(ctx context.Context) (TrafficStats, error)
	// TrafficRejections is the 429s the traffic recorded per minute, for
	// the minutes from since that had any, in time order (at most
	// MaxRejectionMinutes, the newest).
	TrafficRejections(ctx context.Context, since time.Time) ([]MinuteRejections, error)
}

// MinuteRejections is one minute's 429s.
type MinuteRejections struct {
	Minute   time.Time
	Rejected int64
}

// MaxRejectionMinutes bounds TrafficRejections: a week of minutes.
const MaxRejectionMinutes = 7 * 24 * 60
