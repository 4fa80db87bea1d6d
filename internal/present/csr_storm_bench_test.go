package present

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// stormShape is the shape issue 15 measured: one kubelet retrying for hours
// (5,000 pending CSRs with one signer, subject and requester) beside 45,000
// decided requests of 300 users.
func stormShape(tb testing.TB, now time.Time, storm, decided int) []*certificatesv1.CertificateSigningRequest {
	items := make([]*certificatesv1.CertificateSigningRequest, 0, storm+decided)
	// One request body for the whole storm, as a kubelet reusing its key sends;
	// the grouping never looks at the body's bytes, only the decoded subject.
	body := pemRequest(tb, "system:node:storm", "system:nodes")
	for i := range storm {
		c := qcsr(tb, fmt.Sprintf("storm-%05d", i), certificatesv1.KubeAPIServerClientKubeletSignerName, "system:node:storm", "",
			now.Add(-time.Duration(i)*time.Second), CSRPending, time.Time{})
		c.Spec.Request = body
		items = append(items, c)
	}
	states := []string{CSRIssued, CSRDenied}
	bodies := map[int][]byte{}
	for i := range decided {
		c := qcsr(tb, fmt.Sprintf("csr-%05d", i), apiClient, fmt.Sprintf("user-%03d", i%300), "", now.Add(-time.Duration(i)*time.Minute),
			states[i%2], now.Add(-time.Duration(i)*time.Second))
		if bodies[i%300] == nil {
			bodies[i%300] = pemRequest(tb, fmt.Sprintf("user-%03d", i%300))
		}
		c.Spec.Request = bodies[i%300]
		items = append(items, c)
	}
	return items
}

// BenchmarkCSRQueueStorm measures the queue's first page, the pending tab
// filtered by the storm's requester, and the rendered page's size, over the
// storm shape, with the process-wide decode memo and queue cache.
func BenchmarkCSRQueueStorm(b *testing.B) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	items := stormShape(b, now, 5_000, 45_000)
	memo := csr.NewMemo(200_000)
	env := CSRQueueEnv{Now: now, Checks: CSRChecksEnv{Decode: memo.Decode}, MayDecide: func(string) bool { return true }, Cache: &CSRQueueCache{}}
	for _, bc := range []struct {
		name string
		q    CSRQueueQuery
	}{
		{"first", CSRQueueQuery{}},
		{"filtered", CSRQueueQuery{Requester: "storm", State: CSRPending}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			CSRQueue(items, bc.q, env) // fills the memo and cache, as the first view does
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				p := CSRQueue(items, bc.q, env)
				if len(p.Rows) == 0 {
					b.Fatal("no rows")
				}
				if err := pages.CSRQueueTable(p).Render(context.Background(), &buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "page-bytes")
		})
	}
}
