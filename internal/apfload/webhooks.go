package apfload

import (
	"math"
	"slices"

	dto "github.com/prometheus/client_model/go"
)

// Webhook series, as the API server registers them in
// k8s.io/apiserver/pkg/admission/metrics/metrics.go (kubernetes/kubernetes
// staging/src/k8s.io/apiserver/pkg/admission/metrics/metrics.go). Each is
// labelled by the webhook's name (the name inside its configuration, not the
// configuration's) and type: "validating", or "admit" for a mutating webhook.
const (
	webhookPrefix = "apiserver_admission_webhook_"
	// webhookDuration is a histogram by name, type, operation and rejected.
	webhookDuration = webhookPrefix + "admission_duration_seconds"
	// webhookRejections counts by name, type, operation, error_type
	// (calling_webhook_error, apiserver_internal_error, no_error) and rejection_code.
	webhookRejections = webhookPrefix + "rejection_count"
	// webhookFailOpen counts calls that failed and were ignored because the
	// webhook's failurePolicy is Ignore, by name and type.
	webhookFailOpen = webhookPrefix + "fail_open_count"
	// webhookRequests counts by name, type, operation, code and rejected.
	webhookRequests = webhookPrefix + "request_total"
)

// Webhook types, the values of the series' type label.
const (
	TypeValidating = "validating"
	TypeMutating   = "admit"
)

// WebhookKey names a webhook as the API server's metrics do.
type WebhookKey struct {
	Type string // TypeValidating or TypeMutating
	Name string
}

// WebhookTotals is one webhook in one scrape, summed over operations.
type WebhookTotals struct {
	Requests   float64
	Rejected   float64            // requests the webhook answered with a denial (rejected="true")
	Rejections map[string]float64 // by error_type
	FailOpen   float64
	// Latency is the cumulative latency histogram, summed over operations
	// and outcomes (the API server uses the same bounds for all), by bound.
	Latency []Bucket
}

func addWebhookFamily(hooks map[WebhookKey]*WebhookTotals, name string, fam *dto.MetricFamily) {
	for _, m := range fam.GetMetric() {
		var key WebhookKey
		var errorType, rejected string
		for _, lp := range m.GetLabel() {
			switch lp.GetName() {
			case "name":
				key.Name = lp.GetValue()
			case "type":
				key.Type = lp.GetValue()
			case "error_type":
				errorType = lp.GetValue()
			case "rejected":
				rejected = lp.GetValue()
			}
		}
		if key.Name == "" {
			continue
		}
		w := hooks[key]
		if w == nil {
			w = &WebhookTotals{}
			hooks[key] = w
		}
		switch name {
		case webhookRequests:
			v := value(m)
			w.Requests += v
			if rejected == "true" {
				w.Rejected += v
			}
		case webhookFailOpen:
			w.FailOpen += value(m)
		case webhookRejections:
			if w.Rejections == nil {
				w.Rejections = map[string]float64{}
			}
			w.Rejections[errorType] += value(m)
		case webhookDuration:
			for _, b := range m.GetHistogram().GetBucket() {
				w.Latency = addBucket(w.Latency, b.GetUpperBound(), bucketCount(b))
			}
		}
	}
}

func bucketCount(b *dto.Bucket) float64 {
	if b.CumulativeCountFloat != nil {
		return b.GetCumulativeCountFloat()
	}
	return float64(b.GetCumulativeCount())
}

// addBucket adds count to the bucket with bound le, keeping the buckets
// ordered by bound (the API server's histogram has 9).
func addBucket(bs []Bucket, le, count float64) []Bucket {
	i, found := slices.BinarySearchFunc(bs, le, func(b Bucket, le float64) int {
		switch {
		case b.UpperBound < le:
			return -1
		case b.UpperBound > le:
			return 1
		}
		return 0
	})
	if found {
		bs[i].Count += count
		return bs
	}
	return slices.Insert(bs, i, Bucket{UpperBound: le, Count: count})
}

// WebhookLoad is one webhook's health: totals since the API server started
// and, once two scrapes exist, what happened between them.
type WebhookLoad struct {
	RequestsTotal, FailOpenTotal, RejectedTotal float64
	// Calls and FailedOpen are the increases within the window.
	Calls, FailedOpen float64
	RequestsPerSecond float64
	Rejections        []ReasonRate // by error_type
	// P50 and P99 are latency quantiles in seconds over the window's calls;
	// NaN when no call finished in the window (or before the second scrape).
	P50, P99 float64
	// LifetimeP99 is the p99 over every call since the API server started.
	LifetimeP99 float64
	// latency and windowLatency are the histograms the quantiles come from
	// (since start, and of the window's calls): several instances' are
	// added before their quantiles are taken (sumLoads).
	latency, windowLatency []Bucket
}

// webhookLoads computes each webhook's health from cur and, when secs > 0,
// from the increases since prev.
func webhookLoads(prev map[WebhookKey]*WebhookTotals, cur map[WebhookKey]*WebhookTotals, secs float64) map[WebhookKey]WebhookLoad {
	out := make(map[WebhookKey]WebhookLoad, len(cur))
	for key, c := range cur {
		w := WebhookLoad{RequestsTotal: c.Requests, FailOpenTotal: c.FailOpen, RejectedTotal: c.Rejected,
			P50: math.NaN(), P99: math.NaN(), LifetimeP99: Quantile(0.99, c.Latency), latency: c.Latency}
		p, hadPrev := prev[key]
		if !hadPrev {
			p = &WebhookTotals{}
		}
		if secs > 0 {
			w.RequestsPerSecond = rate(p.Requests, c.Requests, hadPrev, secs)
			w.Calls = w.RequestsPerSecond * secs
			w.FailedOpen = rate(p.FailOpen, c.FailOpen, hadPrev, secs) * secs
			w.Rejections, _ = reasonRates(p.Rejections, c.Rejections, hadPrev, secs)
			window := latencyIncrease(p.Latency, c.Latency, hadPrev)
			w.P50, w.P99 = Quantile(0.5, window), Quantile(0.99, window)
			w.windowLatency = window
		} else {
			w.Rejections, _ = reasonRates(nil, c.Rejections, false, 0)
		}
		out[key] = w
	}
	return out
}

// latencyIncrease is the histogram of the calls between two scrapes: each
// bucket's increase, or its whole count after a reset (as rate() does).
func latencyIncrease(prev, cur []Bucket, hadPrev bool) []Bucket {
	out := make([]Bucket, len(cur))
	reset := false
	if hadPrev {
		for _, c := range cur {
			if i := slices.IndexFunc(prev, func(b Bucket) bool { return b.UpperBound == c.UpperBound }); i >= 0 && prev[i].Count > c.Count {
				reset = true
			}
		}
	}
	for i, c := range cur {
		out[i] = c
		if hadPrev && !reset {
			if j := slices.IndexFunc(prev, func(b Bucket) bool { return b.UpperBound == c.UpperBound }); j >= 0 {
				out[i].Count = c.Count - prev[j].Count
			}
		}
	}
	return out
}
