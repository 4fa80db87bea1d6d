package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var hundred []time.Duration
	for i := 1; i <= 100; i++ {
		hundred = append(hundred, time.Duration(i)*time.Millisecond)
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", []time.Duration{7}, 99, 7},
		{"median of 100", hundred, 50, 50 * time.Millisecond},
		{"p99 of 100", hundred, 99, 99 * time.Millisecond},
		{"p99 of 50 is the largest but none", hundred[:50], 99, 50 * time.Millisecond},
		{"p50 of 3", []time.Duration{1, 2, 3}, 50, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("percentile(%d samples, %v) = %v, want %v", len(tt.sorted), tt.p, got, tt.want)
			}
		})
	}
}

func TestSampleStopsAtNOrLimit(t *testing.T) {
	calls := 0
	st, err := sample(5, 2, 1, time.Hour, func() (int64, error) { calls++; return int64(calls), nil })
	if err != nil || st.N != 5 || calls != 6 || st.Bytes != 6 {
		t.Fatalf("sample = %+v, %v after %d calls; want 5 measured after 1 warm-up, bytes of the last", st, err, calls)
	}
	st, err = sample(1000, 3, 0, 0, func() (int64, error) { return 1, nil })
	if err != nil || st.N != 3 {
		t.Fatalf("with the limit passed, sample = %+v, %v; want the minimum of 3", st, err)
	}
	if _, err := sample(5, 2, 0, time.Hour, func() (int64, error) { return 0, errors.New("boom") }); err == nil {
		t.Fatal("an error from fetch must end the measurement")
	}
}

func TestParseGC(t *testing.T) {
	line := "gc 12 @3.456s 2%: 0.021+4.1+0.012 ms clock, 0.043+0.51/2.0/3.1+0.025 ms cpu, 180->185->92 MB, 184 MB goal, 0 MB stacks, 0 MB globals, 2 P"
	if mb, ok := parseGC(line); !ok || mb != 92 {
		t.Errorf("parseGC = %d, %v; want the live heap 92", mb, ok)
	}
	if _, ok := parseGC(`time=2026 level=INFO msg=http path=/gc`); ok {
		t.Error("a log line parsed as a GC line")
	}
}

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tclusterdesk\nVmPeak:\t 2000000 kB\nVmRSS:\t  123456 kB\nThreads:\t12\n"
	if b, err := parseVmRSS(status); err != nil || b != 123456*1024 {
		t.Errorf("parseVmRSS = %d, %v", b, err)
	}
	if _, err := parseVmRSS("Name:\tx\n"); err == nil {
		t.Error("no VmRSS must be an error")
	}
}

// TestParseStatCPU: utime + stime, counted after the command, which may
// hold spaces and a parenthesis of its own.
func TestParseStatCPU(t *testing.T) {
	stat := "4242 (click (desk) x) S 1 4242 4242 0 -1 4194560 9000 0 3 0 1234 566 0 0 20 0 14 0 100 2000000 30000\n"
	if d, err := parseStatCPU(stat); err != nil || d != 18*time.Second {
		t.Errorf("parseStatCPU = %v, %v; want 18s (1,800 ticks)", d, err)
	}
	if _, err := parseStatCPU("4242 (x) S 1 2"); err == nil {
		t.Error("a short stat must be an error")
	}
}

func TestLoginLine(t *testing.T) {
	m := loginLine.FindStringSubmatch("clusterdesk: open http://127.0.0.1:40123/login?token=abc-DEF_1")
	if m == nil || m[1] != "http://127.0.0.1:40123" || m[2] != "/login?token=abc-DEF_1" {
		t.Fatalf("login line parsed as %q", m)
	}
}

func TestPagesFor(t *testing.T) {
	inv := inventoryT{kinds: []*kindInfo{
		{id: "csrs", path: "/apis/c", count: 5000, biggest: "bench-csr-00001", biggestBytes: 2000},
		{id: "flowschemas", path: "/apis/f", count: 500, biggest: "big"},
		{id: "prioritylevels", path: "/apis/p", count: 9},
		{id: "crds", path: "/apis/x", count: 150, biggest: "workflows.argoproj.io", biggestBytes: 3 << 20,
			storageVersions: map[string]string{"workflows.argoproj.io": "v1alpha1"}},
		{id: "validatingwebhooks", path: "/apis/v", count: 200},
		{id: "csidrivers", path: "/apis/s", count: 13},
	}}
	got := map[string]page{}
	for _, p := range pagesFor(inv, "https://h") {
		got[p.page] = p
	}
	if p := got["/"]; len(p.raw) != 6 || p.objects != 5000+500+9+150+200+13 {
		t.Errorf("home: %+v", p)
	}
	if p := got["/flowschemas"]; len(p.raw) != 2 || p.raw[1] != "https://h/apis/p" || p.objects != 509 {
		t.Errorf("flowschemas needs both lists: %+v", p)
	}
	if p := got["/crds/workflows.argoproj.io/schema/v1alpha1"]; len(p.raw) != 1 || p.raw[0] != "https://h/apis/x/workflows.argoproj.io" {
		t.Errorf("schema page: %+v", p)
	}
	if _, ok := got["/validatingwebhooks/"]; ok {
		t.Error("a kind without objects got a detail page")
	}
	// Home, six lists, the detail pages of the three kinds with a biggest object, and the schema page.
	if len(got) != 1+6+3+1 {
		t.Errorf("%d pages: %v", len(got), got)
	}
}

func TestWriteReport(t *testing.T) {
	var b bytes.Buffer
	rows := []row{
		{Page: "/csrs", What: "LIST csrs", Objects: 5000,
			Console: stats{N: 50, P50: 40 * time.Millisecond, P99: 1200 * time.Millisecond, Bytes: 3 << 20},
			Raw:     stats{N: 50, P50: 400 * time.Millisecond, P99: 600 * time.Millisecond, Bytes: 15 << 20}},
	}
	writeReport(&b, "header", rows, startup{Listening: time.Millisecond, Ready: 2 * time.Second, FirstPage: 3 * time.Second,
		FirstPagePath: "/csrs", RSSReady: 200 << 20, RSSEnd: 300 << 20, HeapMiB: 100, GCs: 7, Objects: 2000,
		KindHeaps: []kindHeap{{ID: "csrs", Objects: 5000, Bytes: 10 << 20}, {ID: "csidrivers", Objects: 0, Bytes: 1024}}})
	out := b.String()
	for _, want := range []string{"header", "/csrs", "40.0 ms", "1200 ms", "3.0 MiB", "15.0 MiB", "10×",
		"ready (cache synced) 2000 ms", "per 1,000 objects RSS 150.0 MiB, heap 50.0 MiB", "SLOW: /csrs takes over 1 s (p50 40.0 ms, p99 1200 ms)",
		"csrs 5000 objects 10.0 MiB (2.0 MiB per 1,000); csidrivers 0 objects 1.0 KiB (-)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
