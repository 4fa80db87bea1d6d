package metrics

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestHostileLabelsAreBounded: a client chooses the method freely (net/http
// passes any token through) and a buggy handler could write any code; 2,000
// made-up methods and codes must add a fixed number of series, not 2,000.
func TestHostileLabelsAreBounded(t *testing.T) {
	r := New()
	for i := range 2000 {
		method := strings.Repeat(string(rune('A'+rand.IntN(26))), 64) + string(rune('A'+i%26)) + strings.Repeat("X", i)
		r.ObserveHTTP(method, UnmatchedRoute, 405, time.Millisecond, false)
		r.ObserveHTTP("GET", "/:kind", 1000+i, time.Millisecond, false)
	}
	r.ObserveHTTP("get", "/:kind", 200, time.Millisecond, false) // not the method GET
	if n := testutil.CollectAndCount(r.httpRequests); n != 3 {
		t.Errorf("%d request series after 2,000 made-up methods and codes, want 3 (other/unmatched/405, GET/:kind/other, other/:kind/200)", n)
	}
	if n := testutil.CollectAndCount(r.httpDuration); n != 3 {
		t.Errorf("%d duration series, want 3 (by method and route)", n)
	}
	want := `
# HELP clusterdesk_http_requests_total HTTP requests served, by method, route template and status code.
# TYPE clusterdesk_http_requests_total counter
clusterdesk_http_requests_total{code="405",method="other",route="unmatched"} 2000
clusterdesk_http_requests_total{code="200",method="other",route="/:kind"} 1
clusterdesk_http_requests_total{code="other",method="GET",route="/:kind"} 2000
`
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(want), "clusterdesk_http_requests_total"); err != nil {
		t.Error(err)
	}
}

// TestKnownMethodsKeepTheirLabel: the methods the console serves are counted as such.
func TestKnownMethodsKeepTheirLabel(t *testing.T) {
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
		if got := methodLabel(m); got != m {
			t.Errorf("methodLabel(%s) = %s", m, got)
		}
	}
	for _, m := range []string{"", "CONNECT", "TRACE", "PROPFIND", "get", "GET "} {
		if got := methodLabel(m); got != OtherLabel {
			t.Errorf("methodLabel(%q) = %s, want other", m, got)
		}
	}
}
