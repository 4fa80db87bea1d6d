package apfload

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// readFixture returns the capture, kept gzip-compressed (3.7 MiB of text,
// 0.14 MiB in git).
func readFixture(t testing.TB) []byte {
	t.Helper()
	f, err := os.Open("testdata/devcluster-metrics.txt.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The devcluster capture: kube-apiserver v1.36 /metrics, 3.7 MiB.
func TestParseDevclusterCapture(t *testing.T) {
	body := readFixture(t)
	got, err := Parse(bytes.NewReader(body), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if got.BytesRead != int64(len(body)) {
		t.Errorf("BytesRead = %d, want %d", got.BytesRead, len(body))
	}
	if got.KeptBytes >= int64(len(body))/10 {
		t.Errorf("KeptBytes = %d: the filter kept more than a tenth of %d", got.KeptBytes, len(body))
	}
	ex := got.Levels["exempt"]
	if ex == nil || ex.Dispatched != 13847 || ex.Executing != 1 {
		t.Errorf("exempt = %+v, want dispatched 13847, executing 1", ex)
	}
	gd := got.Levels["global-default"]
	if gd == nil || !gd.HasLimits || gd.NominalSeats <= 0 {
		t.Errorf("global-default = %+v, want nominal seats", gd)
	}
	fs := got.Schemas["clusterdesk-auditor-reads"]
	if fs == nil || fs.PriorityLevel != "clusterdesk-console" || fs.Dispatched != 281 || !fs.SeenDispatched {
		t.Errorf("clusterdesk-auditor-reads = %+v", fs)
	}
	if len(got.Levels) < 5 {
		t.Errorf("levels = %d, want the devcluster's ≥ 5", len(got.Levels))
	}
}

const rejectedText = `# HELP apiserver_flowcontrol_rejected_requests_total [BETA] Number of requests rejected by API Priority and Fairness subsystem
# TYPE apiserver_flowcontrol_rejected_requests_total counter
apiserver_flowcontrol_rejected_requests_total{flow_schema="fs-a",priority_level="pl-a",reason="queue-full"} %d
apiserver_flowcontrol_rejected_requests_total{flow_schema="fs-a",priority_level="pl-a",reason="time-out"} %d
# TYPE apiserver_flowcontrol_dispatched_requests_total counter
apiserver_flowcontrol_dispatched_requests_total{flow_schema="fs-a",priority_level="pl-a"} %d
# TYPE apiserver_flowcontrol_nominal_limit_seats gauge
apiserver_flowcontrol_nominal_limit_seats{priority_level="pl-a"} 2
apiserver_flowcontrol_nominal_limit_seats{priority_level="pl-idle"} 5
# TYPE apiserver_flowcontrol_current_inqueue_requests gauge
apiserver_flowcontrol_current_inqueue_requests{flow_schema="fs-a",priority_level="pl-a"} 7
# TYPE apiserver_request_total counter
apiserver_request_total{code="200"} 12
`

func parseText(t *testing.T, s string) Totals {
	t.Helper()
	got, err := Parse(strings.NewReader(s), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestRatesFromConsecutiveScrapes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	first := parseText(t, fmt.Sprintf(rejectedText, 100, 10, 50))
	second := parseText(t, fmt.Sprintf(rejectedText, 400, 10, 80))

	ld := loadOf(nil, time.Time{}, first, t0)
	if ld.HasRates() {
		t.Fatal("one scrape has no rates")
	}
	ld = loadOf(&first, t0, second, t0.Add(10*time.Second))
	pl := ld.Levels["pl-a"]
	if pl.RejectedPerSecond != 30 || pl.DispatchedPerSecond != 3 || pl.Waiting != 7 || pl.NominalSeats != 2 {
		t.Errorf("pl-a = %+v, want 30 rejected/s, 3 dispatched/s, 7 waiting, 2 seats", pl)
	}
	if len(pl.Rejected) != 2 || pl.Rejected[0].Reason != "queue-full" || pl.Rejected[0].PerSecond != 30 || pl.Rejected[1].PerSecond != 0 {
		t.Errorf("by reason = %+v", pl.Rejected)
	}
	fs := ld.Schemas["fs-a"]
	if !fs.Matched || fs.RejectedPerSecond != 30 || fs.PriorityLevel != "pl-a" {
		t.Errorf("fs-a = %+v", fs)
	}
	if _, ok := ld.Levels["pl-idle"]; !ok {
		t.Error("a level with only seat gauges is missing")
	}
}

// A counter that goes down was reset (API server restart, or another
// instance behind the load balancer): the new value is the increase.
func TestRateAfterCounterReset(t *testing.T) {
	t0 := time.Unix(1000, 0)
	before := parseText(t, fmt.Sprintf(rejectedText, 5000, 10, 9000))
	after := parseText(t, fmt.Sprintf(rejectedText, 20, 10, 40))
	ld := loadOf(&before, t0, after, t0.Add(10*time.Second))
	pl := ld.Levels["pl-a"]
	if pl.DispatchedPerSecond != 4 || pl.Rejected[0].PerSecond != 2 {
		t.Errorf("after reset: %+v", pl)
	}
	for _, r := range pl.Rejected {
		if r.PerSecond < 0 {
			t.Errorf("negative rate %+v", r)
		}
	}
}

func TestSchemaNeverMatched(t *testing.T) {
	got := parseText(t, `apiserver_flowcontrol_current_inqueue_requests{flow_schema="quiet",priority_level="pl"} 0
apiserver_flowcontrol_dispatched_requests_total{flow_schema="zero",priority_level="pl"} 0
`)
	ld := loadOf(nil, time.Time{}, got, time.Now())
	if ld.Schemas["quiet"].Matched || ld.Schemas["zero"].Matched {
		t.Errorf("absent or zero counters count as matched: %+v", ld.Schemas)
	}
	if _, ok := ld.Schemas["absent"]; ok {
		t.Error("a schema with no series appeared")
	}
}

func TestParseLimits(t *testing.T) {
	body := readFixture(t)
	if _, err := Parse(bytes.NewReader(body), Limits{MaxBodyBytes: 1 << 20, MaxKeptBytes: 8 << 20, MaxLineBytes: 64 << 10}); err == nil {
		t.Error("a body over MaxBodyBytes was accepted")
	}
	if _, err := Parse(bytes.NewReader(body), Limits{MaxBodyBytes: 64 << 20, MaxKeptBytes: 1 << 10, MaxLineBytes: 64 << 10}); err == nil {
		t.Error("kept series over MaxKeptBytes were accepted")
	}
	long := "apiserver_flowcontrol_nominal_limit_seats{priority_level=\"" + strings.Repeat("x", 100<<10) + "\"} 1\n"
	if _, err := Parse(strings.NewReader(long), DefaultLimits); err == nil {
		t.Error("a line over MaxLineBytes was accepted")
	}
}

func TestParseRejectsMalformedKeptSeries(t *testing.T) {
	if _, err := Parse(strings.NewReader("apiserver_flowcontrol_nominal_limit_seats{priority_level=\"a\" 1\n"), DefaultLimits); err == nil {
		t.Error("a malformed flow-control line was accepted")
	}
}

// worstShape is the devcluster capture plus 200 priority levels, each with
// one FlowSchema, every series and every rejection reason present.
func worstShape(tb testing.TB) []byte {
	var b bytes.Buffer
	b.Write(readFixture(tb))
	for i := range 200 {
		pl, fs := fmt.Sprintf("level-%03d-%s", i, strings.Repeat("p", 40)), fmt.Sprintf("schema-%03d-%s", i, strings.Repeat("f", 40))
		for _, g := range []string{nominalSeats, lowerSeats, upperSeats, currentSeats} {
			fmt.Fprintf(&b, "%s{priority_level=%q} %d\n", g, pl, i)
		}
		for _, g := range []string{executingSeats, executingRequests, inqueueRequests, dispatchedTotal} {
			fmt.Fprintf(&b, "%s{flow_schema=%q,priority_level=%q} %d\n", g, fs, pl, i*7)
		}
		for _, r := range reasonOrder {
			fmt.Fprintf(&b, "%s{flow_schema=%q,priority_level=%q,reason=%q} %d\n", rejectedTotal, fs, pl, r, i*3)
		}
	}
	return b.Bytes()
}

func TestParseWorstShape(t *testing.T) {
	got, err := Parse(bytes.NewReader(worstShape(t)), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Schemas) < 200 || len(got.Levels) < 200 {
		t.Errorf("levels %d, schemas %d; want ≥ 200 each", len(got.Levels), len(got.Schemas))
	}
}

func benchmarkParse(b *testing.B, body []byte) {
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var kept int64
	for b.Loop() {
		got, err := Parse(bytes.NewReader(body), DefaultLimits)
		if err != nil {
			b.Fatal(err)
		}
		kept = got.KeptBytes
	}
	b.ReportMetric(float64(len(body)), "body-bytes")
	b.ReportMetric(float64(kept), "kept-bytes")
}

// BenchmarkScrapeDevcluster is the CPU of one scrape's parse of a real
// kube-apiserver /metrics body (the network read is the API server's cost).
func BenchmarkScrapeDevcluster(b *testing.B) { benchmarkParse(b, readFixture(b)) }

// BenchmarkScrapeWorst is the same with 200 priority levels and FlowSchemas.
func BenchmarkScrapeWorst(b *testing.B) { benchmarkParse(b, worstShape(b)) }

// TestParseReadsTheStoredObjectsPerResource: the capture's object counts and
// size estimates, keyed as the work estimator keys them.
func TestParseReadsTheStoredObjectsPerResource(t *testing.T) {
	got, err := Parse(bytes.NewReader(readFixture(t)), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if cm := got.Resources["configmaps"]; cm.Objects != 18 || cm.Bytes != 3798 {
		t.Errorf("configmaps %+v", cm)
	}
	if crd := got.Resources["customresourcedefinitions.apiextensions.k8s.io"]; crd.Objects != 152 || crd.Bytes != 15374344 {
		t.Errorf("CRDs %+v", crd)
	}
	ld := loadOf(nil, time.Time{}, got, time.Now())
	if ld.Resources["configmaps"].Objects != 18 {
		t.Errorf("the load's resources %+v", ld.Resources["configmaps"])
	}
}
