//go:build !race

// The cost limit's worst shape, built without the race detector
// (scripts/go-test-unit.sh runs it in its pass without -race, beside the
// package's benchmarks): CEL runs the cubic expression on the test's one
// goroutine until the cost limit stops it, where the race detector has
// nothing to find and made it 13.7 s of CI's unit layer.

package csrpolicy

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestCostLimitStopsAWorstShapeRequest: a 200-SAN request against a policy
// that compares every triple of SANs exceeds the API server's per-expression
// cost limit: an error, never a decision.
func TestCostLimitStopsAWorstShapeRequest(t *testing.T) {
	pr := compile(t, Policy{Name: "cubic", Signers: []string{"example.com/x"}, Decision: Approve,
		Expression: "request.dnsNames.all(a, request.dnsNames.all(b, request.dnsNames.all(c, a + b + c != '')))"})
	i := good()
	i.dns = nil
	for n := range 200 {
		i.dns = append(i.dns, fmt.Sprintf("san-%03d.k8s.example.com", n))
	}
	v := pr.Evaluate(context.Background(), i.build())
	if v.Err == nil || v.Matched || !strings.Contains(v.Err.Error(), "cost") {
		t.Errorf("200 SANs cubed: %+v", v)
	}
	i.dns = i.dns[:3]
	if v := pr.Evaluate(context.Background(), i.build()); v.Err != nil || !v.Matched {
		t.Errorf("3 SANs cubed: %+v", v)
	}
}
