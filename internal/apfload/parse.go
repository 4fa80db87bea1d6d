// Package apfload samples the API server's own measurements of API Priority
// and Fairness (the apiserver_flowcontrol_* series of its /metrics) and of
// admission webhooks (apiserver_admission_webhook_*), and turns consecutive
// samples into per-priority-level, per-FlowSchema and per-webhook load.
package apfload

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Series names, as the API server registers them in
// k8s.io/apiserver/pkg/util/flowcontrol/metrics/metrics.go (kubernetes/kubernetes
// staging/src/k8s.io/apiserver/pkg/util/flowcontrol/metrics/metrics.go).
const (
	prefix            = "apiserver_flowcontrol_"
	executingSeats    = prefix + "current_executing_seats"
	executingRequests = prefix + "current_executing_requests"
	inqueueRequests   = prefix + "current_inqueue_requests"
	nominalSeats      = prefix + "nominal_limit_seats"
	lowerSeats        = prefix + "lower_limit_seats"
	upperSeats        = prefix + "upper_limit_seats"
	currentSeats      = prefix + "current_limit_seats"
	dispatchedTotal   = prefix + "dispatched_requests_total"
	rejectedTotal     = prefix + "rejected_requests_total"
	// processStartTime is when the API server process started (Unix
	// seconds): a new value between two scrapes of one instance is a restart,
	// so its counters started again from zero.
	processStartTime = "process_start_time_seconds"
	// The stored objects' count and estimated size per resource
	// (k8s.io/apiserver pkg/storage/etcd3/metrics): what the API server's
	// work estimator weighs a LIST by, read for the APF what-if.
	resourceObjects      = "apiserver_resource_objects"
	resourceSizeEstimate = "apiserver_resource_size_estimate_bytes"
)

// kept is every series the sampler reads; the rest of /metrics (megabytes of
// histograms) is dropped line by line before the parser sees it.
var kept = map[string]bool{
	executingSeats: true, executingRequests: true, inqueueRequests: true,
	nominalSeats: true, lowerSeats: true, upperSeats: true, currentSeats: true,
	dispatchedTotal: true, rejectedTotal: true,
	webhookDuration: true, webhookRejections: true, webhookFailOpen: true, webhookRequests: true,
	processStartTime: true,
	resourceObjects:  true, resourceSizeEstimate: true,
}

// Limits bound what one scrape may cost, whatever the API server sends.
type Limits struct {
	// MaxBodyBytes is how much of /metrics is read; past it the scrape fails.
	MaxBodyBytes int64
	// MaxKeptBytes is how much of the kept series text is buffered for the parser.
	MaxKeptBytes int
	// MaxLineBytes is the longest line read; a longer one fails the scrape.
	MaxLineBytes int
}

// DefaultLimits fit a large cluster: kube-apiserver /metrics is a few MiB
// (3.7 MiB on the devcluster); 200 priority levels with 200 FlowSchemas keep
// well under 2 MiB of flow-control lines, and 500 webhooks called for every
// operation, accepted and rejected, keep about 10 MiB of webhook lines
// (TestParseWorstWebhookShape).
var DefaultLimits = Limits{MaxBodyBytes: 64 << 20, MaxKeptBytes: 16 << 20, MaxLineBytes: 64 << 10}

// Totals are one scrape's numbers, before rates.
type Totals struct {
	Levels  map[string]*LevelTotals
	Schemas map[string]*SchemaTotals
	// Webhooks are the admission webhooks the API server has called since it started.
	Webhooks map[WebhookKey]*WebhookTotals
	// BytesRead is the size of the /metrics body; KeptBytes the kept series' text
	// (buffered for expfmt, or summed as read: the latency buckets).
	BytesRead, KeptBytes int64
	// StartTime is the process's start (process_start_time_seconds); 0 when absent.
	StartTime float64
	// Resources are the stored objects per resource, by ResourceKey.
	Resources map[string]ResourceStats
}

// LevelTotals is one priority level in one scrape. Gauges summed over its
// FlowSchemas where the API server splits them by flow_schema.
type LevelTotals struct {
	NominalSeats, LowerSeats, UpperSeats, CurrentLimitSeats float64
	ExecutingSeats, Executing, Waiting                      float64
	HasLimits                                               bool
	Dispatched                                              float64
	Rejected                                                map[string]float64 // by reason
}

// SchemaTotals is one FlowSchema in one scrape.
type SchemaTotals struct {
	PriorityLevel  string
	Executing      float64
	Waiting        float64
	Dispatched     float64
	Rejected       map[string]float64 // by reason
	SeenDispatched bool               // the counter exists: some request matched since the API server started
}

// Parse reads a /metrics body in the Prometheus text format and keeps the
// flow-control and webhook series. Only lines of those series reach expfmt's
// parser, so memory is bounded by Limits, not by the size of /metrics; the
// webhook latency buckets, most of those lines, are summed as they come
// (bucketSums) instead of being buffered.
func Parse(body io.Reader, lim Limits) (Totals, error) {
	return parse(body, lim, true)
}

func parse(body io.Reader, lim Limits, sumBuckets bool) (Totals, error) {
	counted := &countingReader{r: io.LimitReader(body, lim.MaxBodyBytes+1)}
	sc := bufio.NewScanner(counted)
	sc.Buffer(make([]byte, 0, 64<<10), lim.MaxLineBytes)
	var keptText bytes.Buffer
	kept := 0 // every kept line's bytes, buffered or summed: the limit is on both
	buckets := bucketSums{hooks: map[WebhookKey]*[]Bucket{}}
	for sc.Scan() {
		line := sc.Bytes()
		if !keepLine(line) {
			continue
		}
		if kept+len(line)+1 > lim.MaxKeptBytes {
			return Totals{}, fmt.Errorf("flow-control and webhook series exceed %d bytes", lim.MaxKeptBytes)
		}
		kept += len(line) + 1
		if sumBuckets {
			if bytes.Equal(line, histogramType) {
				buckets.typed = true
			}
			if buckets.add(line) {
				continue
			}
		}
		keptText.Write(line)
		keptText.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return Totals{}, fmt.Errorf("read /metrics: %w", err)
	}
	if counted.n > lim.MaxBodyBytes {
		return Totals{}, fmt.Errorf("/metrics is larger than %d bytes", lim.MaxBodyBytes)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(&keptText)
	if err != nil {
		return Totals{}, fmt.Errorf("parse flow-control series: %w", err)
	}
	t := fromFamilies(families)
	for key, bs := range buckets.hooks {
		w := t.Webhooks[key]
		if w == nil {
			w = &WebhookTotals{}
			t.Webhooks[key] = w
		}
		for _, b := range *bs {
			w.Latency = addBucket(w.Latency, b.UpperBound, b.Count)
		}
	}
	t.BytesRead, t.KeptBytes = counted.n, int64(kept)
	return t, nil
}

// keepLine selects the kept series' samples and their # HELP / # TYPE lines.
func keepLine(line []byte) bool {
	name := line
	if bytes.HasPrefix(line, []byte("# ")) {
		f := bytes.Fields(line)
		if len(f) < 3 {
			return false
		}
		name = f[2]
	}
	if !bytes.HasPrefix(name, []byte(prefix)) && !bytes.HasPrefix(name, []byte(webhookPrefix)) && !bytes.HasPrefix(name, []byte(processStartTime)) &&
		!bytes.HasPrefix(name, []byte("apiserver_resource_")) {
		return false
	}
	end := bytes.IndexAny(name, "{ \t")
	if end >= 0 {
		name = name[:end]
	}
	// Of the latency histogram only the buckets are read: the +Inf bucket is
	// the count, and the sum is not shown. Dropping _sum and _count lines
	// keeps a sixth less text per webhook.
	if bytes.HasPrefix(name, []byte(webhookDuration)) && !bytes.HasPrefix(line, []byte("# ")) {
		return string(name) == webhookDuration+"_bucket"
	}
	return kept[string(name)]
}

func fromFamilies(families map[string]*dto.MetricFamily) Totals {
	t := Totals{Levels: map[string]*LevelTotals{}, Schemas: map[string]*SchemaTotals{}, Webhooks: map[WebhookKey]*WebhookTotals{},
		Resources: map[string]ResourceStats{}}
	level := func(name string) *LevelTotals {
		l := t.Levels[name]
		if l == nil {
			l = &LevelTotals{Rejected: map[string]float64{}}
			t.Levels[name] = l
		}
		return l
	}
	schema := func(name, pl string) *SchemaTotals {
		s := t.Schemas[name]
		if s == nil {
			s = &SchemaTotals{PriorityLevel: pl, Rejected: map[string]float64{}}
			t.Schemas[name] = s
		}
		return s
	}
	for name, fam := range families {
		if strings.HasPrefix(name, webhookPrefix) {
			addWebhookFamily(t.Webhooks, name, fam)
			continue
		}
		if name == processStartTime {
			for _, m := range fam.GetMetric() {
				t.StartTime = value(m)
			}
			continue
		}
		if name == resourceObjects || name == resourceSizeEstimate {
			addResourceFamily(t.Resources, name, fam)
			continue
		}
		for _, m := range fam.GetMetric() {
			labels := labelsOf(m)
			pl, fs := labels["priority_level"], labels["flow_schema"]
			if pl == "" {
				continue
			}
			v := value(m)
			l := level(pl)
			switch name {
			case nominalSeats:
				l.NominalSeats, l.HasLimits = v, true
			case lowerSeats:
				l.LowerSeats = v
			case upperSeats:
				l.UpperSeats = v
			case currentSeats:
				l.CurrentLimitSeats = v
			case executingSeats:
				l.ExecutingSeats += v
			case executingRequests:
				l.Executing += v
				if fs != "" {
					schema(fs, pl).Executing += v
				}
			case inqueueRequests:
				l.Waiting += v
				if fs != "" {
					schema(fs, pl).Waiting += v
				}
			case dispatchedTotal:
				l.Dispatched += v
				if fs != "" {
					s := schema(fs, pl)
					s.Dispatched += v
					s.SeenDispatched = true
				}
			case rejectedTotal:
				reason := labels["reason"]
				l.Rejected[reason] += v
				if fs != "" {
					schema(fs, pl).Rejected[reason] += v
				}
			}
		}
	}
	return t
}

func labelsOf(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, lp := range m.GetLabel() {
		out[lp.GetName()] = lp.GetValue()
	}
	return out
}

// value reads a gauge, counter or untyped sample (the text format without
// # TYPE lines gives untyped).
func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// reasonOrder is the API server's rejection reasons in a stable display order
// (staging/src/k8s.io/apiserver/pkg/util/flowcontrol/apf_filter.go: queue-full,
// concurrency-limit, time-out, cancelled).
var reasonOrder = []string{"queue-full", "concurrency-limit", "time-out", "cancelled"}

func sortedReasons(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	seen := map[string]bool{}
	for _, r := range reasonOrder {
		if _, ok := m[r]; ok {
			out = append(out, r)
			seen[r] = true
		}
	}
	var rest []string
	for r := range m {
		if !seen[r] {
			rest = append(rest, r)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}
