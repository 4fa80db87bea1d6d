package apfload

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseWebhooksOfDevclusterCapture(t *testing.T) {
	got, err := Parse(bytes.NewReader(readFixture(t)), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	// The seeded demo webhook whose Service has no endpoints: two calls,
	// both answered 503 and ignored by failurePolicy Ignore.
	pods := got.Webhooks[WebhookKey{Type: TypeValidating, Name: "pods.policy.demo.clusterdesk.dev"}]
	if pods == nil || pods.FailOpen != 2 || pods.Requests != 2 {
		t.Fatalf("pods.policy.demo = %+v, want 2 requests that failed open", pods)
	}
	// cm-all is called for CREATE (9), DELETE (2) and UPDATE (2): summed over operations.
	cm := got.Webhooks[WebhookKey{Type: TypeValidating, Name: "cm-all.icpt.clusterdesk.dev"}]
	if cm == nil || cm.Requests != 13 || cm.FailOpen != 0 {
		t.Fatalf("cm-all = %+v, want 13 requests", cm)
	}
	if n := len(cm.Latency); n != 9 || cm.Latency[n-1].Count != 13 || !math.IsInf(cm.Latency[n-1].UpperBound, 1) {
		t.Errorf("cm-all latency = %+v, want 9 buckets ending with +Inf 13", cm.Latency)
	}
	if m := got.Webhooks[WebhookKey{Type: TypeMutating, Name: "m-cm-create.icpt.clusterdesk.dev"}]; m == nil || m.Requests != 9 {
		t.Errorf("mutating m-cm-create = %+v, want 9 requests under type admit", m)
	}
}

// hookScrape is one scrape of a single webhook "w": requests, fail-opens,
// calling_webhook_error rejections and the latency buckets
// (0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25, +Inf), split over two operations
// to prove they are summed.
func hookScrape(t *testing.T, requests, failOpen, rejections int, buckets [9]int) Totals {
	t.Helper()
	var b strings.Builder
	b.WriteString("# TYPE apiserver_admission_webhook_admission_duration_seconds histogram\n")
	les := []string{"0.005", "0.025", "0.1", "0.5", "1", "2.5", "10", "25", "+Inf"}
	for _, op := range []string{"CREATE", "UPDATE"} {
		for i, le := range les {
			n := buckets[i] / 2
			if op == "CREATE" {
				n = buckets[i] - buckets[i]/2
			}
			fmt.Fprintf(&b, "apiserver_admission_webhook_admission_duration_seconds_bucket{name=\"w\",operation=%q,rejected=\"false\",type=\"validating\",le=%q} %d\n", op, le, n)
		}
		fmt.Fprintf(&b, "apiserver_admission_webhook_admission_duration_seconds_sum{name=\"w\",operation=%q,rejected=\"false\",type=\"validating\"} 1.5\n", op)
	}
	fmt.Fprintf(&b, "# TYPE apiserver_admission_webhook_request_total counter\napiserver_admission_webhook_request_total{code=\"200\",name=\"w\",operation=\"CREATE\",rejected=\"false\",type=\"validating\"} %d\n", requests)
	fmt.Fprintf(&b, "# TYPE apiserver_admission_webhook_fail_open_count counter\napiserver_admission_webhook_fail_open_count{name=\"w\",type=\"validating\"} %d\n", failOpen)
	fmt.Fprintf(&b, "# TYPE apiserver_admission_webhook_rejection_count counter\napiserver_admission_webhook_rejection_count{error_type=\"calling_webhook_error\",name=\"w\",operation=\"CREATE\",rejection_code=\"0\",type=\"validating\"} %d\n", rejections)
	return parseText(t, b.String())
}

func TestWebhookHealthFromConsecutiveScrapes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	key := WebhookKey{Type: TypeValidating, Name: "w"}
	// 100 fast calls before the window.
	first := hookScrape(t, 100, 0, 0, [9]int{100, 100, 100, 100, 100, 100, 100, 100, 100})
	// In 10 s: 10 more calls, 4 of them timing out at 1 s and failing open.
	second := hookScrape(t, 110, 4, 4, [9]int{106, 106, 106, 106, 106, 110, 110, 110, 110})

	one := loadOf(nil, time.Time{}, first, t0).Webhooks[key]
	if !math.IsNaN(one.P99) || one.FailedOpen != 0 || one.RequestsTotal != 100 {
		t.Errorf("first scrape: %+v, want totals only", one)
	}
	w := loadOf(&first, t0, second, t0.Add(10*time.Second)).Webhooks[key]
	if w.RequestsPerSecond != 1 || w.Calls != 10 || w.FailedOpen != 4 || w.FailOpenTotal != 4 {
		t.Errorf("window: %+v, want 1/s, 10 calls, 4 failed open", w)
	}
	// Window histogram: 6 ≤ 0.005, 4 in (1, 2.5]. p50 rank 5 of 6 in the
	// first bucket; p99 rank 9.9 is 3.9/4 of the way from 1 to 2.5.
	if want := 0.005 * 5 / 6; math.Abs(w.P50-want) > 1e-12 {
		t.Errorf("p50 = %v, want %v", w.P50, want)
	}
	if want := 1 + 1.5*3.9/4; math.Abs(w.P99-want) > 1e-12 {
		t.Errorf("p99 = %v, want %v", w.P99, want)
	}
	if len(w.Rejections) != 1 || w.Rejections[0].Reason != "calling_webhook_error" || w.Rejections[0].PerSecond != 0.4 {
		t.Errorf("rejections = %+v", w.Rejections)
	}
	// Lifetime p99 over 110 calls: rank 108.9 in (1, 2.5].
	if want := 1 + 1.5*(108.9-106)/4; math.Abs(w.LifetimeP99-want) > 1e-9 {
		t.Errorf("lifetime p99 = %v, want %v", w.LifetimeP99, want)
	}

	// The API server restarted: every counter went down, so the window is
	// the new counts (as rate() treats a reset).
	restarted := hookScrape(t, 3, 1, 0, [9]int{2, 2, 2, 2, 2, 3, 3, 3, 3})
	r := loadOf(&second, t0.Add(10*time.Second), restarted, t0.Add(20*time.Second)).Webhooks[key]
	if r.Calls != 3 || r.FailedOpen != 1 || math.Abs(r.P99-(1+1.5*(2.97-2))) > 1e-12 {
		t.Errorf("after reset: %+v", r)
	}
}

// worstWebhookShape is the devcluster capture plus 500 webhooks with
// 63-character names, each called for all four operations, accepted and
// rejected: every bucket, request and rejection series present.
func worstWebhookShape(tb testing.TB) []byte {
	var b bytes.Buffer
	b.Write(readFixture(tb))
	les := []string{"0.005", "0.025", "0.1", "0.5", "1", "2.5", "10", "25", "+Inf"}
	for i := range 500 {
		name := fmt.Sprintf("hook-%03d.%s.example.com", i, strings.Repeat("w", 43))
		for _, op := range []string{"CREATE", "UPDATE", "DELETE", "CONNECT"} {
			for _, rej := range []string{"false", "true"} {
				for j, le := range les {
					fmt.Fprintf(&b, "%s_bucket{name=%q,operation=%q,rejected=%q,type=\"validating\",le=%q} %d\n", webhookDuration, name, op, rej, le, i+j)
				}
				fmt.Fprintf(&b, "%s_sum{name=%q,operation=%q,rejected=%q,type=\"validating\"} %d.5\n", webhookDuration, name, op, rej, i)
				fmt.Fprintf(&b, "%s_count{name=%q,operation=%q,rejected=%q,type=\"validating\"} %d\n", webhookDuration, name, op, rej, i+8)
				fmt.Fprintf(&b, "%s{code=\"200\",name=%q,operation=%q,rejected=%q,type=\"validating\"} %d\n", webhookRequests, name, op, rej, i)
			}
			fmt.Fprintf(&b, "%s{error_type=\"calling_webhook_error\",name=%q,operation=%q,rejection_code=\"0\",type=\"validating\"} %d\n", webhookRejections, name, op, i)
		}
		fmt.Fprintf(&b, "%s{name=%q,type=\"validating\"} %d\n", webhookFailOpen, name, i)
	}
	return b.Bytes()
}

// BenchmarkScrapeWorstWebhooks is one scrape's parse and rates with 500
// webhooks × 4 operations × 2 outcomes × 9 buckets.
func BenchmarkScrapeWorstWebhooks(b *testing.B) {
	body := worstWebhookShape(b)
	prev, err := Parse(bytes.NewReader(body), DefaultLimits)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	t0 := time.Now()
	for b.Loop() {
		cur, err := Parse(bytes.NewReader(body), DefaultLimits)
		if err != nil {
			b.Fatal(err)
		}
		_ = loadOf(&prev, t0, cur, t0.Add(10*time.Second))
	}
	b.ReportMetric(float64(len(body)), "body-bytes")
	b.ReportMetric(float64(prev.KeptBytes), "kept-bytes")
}
