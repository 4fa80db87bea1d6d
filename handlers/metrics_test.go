package handlers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clusterdesk/clusterdesk/internal/metrics"
)

// TestRequestMetricsUseRouteTemplates: requests are counted by route template
// and the status sent, never by raw path; unknown paths share one series.
func TestRequestMetricsUseRouteTemplates(t *testing.T) {
	reg := metrics.New()
	ts := newFakeConsole(t, emptyCluster{}, denyAll{}, func(d *Deps) { d.Metrics = reg })
	for _, p := range []string{"/healthz", "/readyz", "/crds/secret-name-1", "/crds/secret-name-2", "/no/such/page/abc", "/no/such/page/def"} {
		ts.do(httptest.NewRequest(http.MethodGet, p, nil))
	}
	want := `
# HELP clusterdesk_http_requests_total HTTP requests served, by method, route template and status code.
# TYPE clusterdesk_http_requests_total counter
clusterdesk_http_requests_total{code="200",method="GET",route="/healthz"} 1
clusterdesk_http_requests_total{code="401",method="GET",route="/:kind/:name"} 2
clusterdesk_http_requests_total{code="401",method="GET",route="/*"} 2
clusterdesk_http_requests_total{code="503",method="GET",route="/readyz"} 1
`
	if err := testutil.GatherAndCompare(reg.Gatherer(), strings.NewReader(want), "clusterdesk_http_requests_total"); err != nil {
		t.Error(err)
	}
}
