package present

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/views/pages"
)

// stormShape is the shape issue 15 measured: one kubelet retrying for hours
// (5,000 pending CSRs with one signer, subject and requester) beside 45,000
// decided requests of 300 users.
func stormShape(tb testing.TB, now time.Time, storm, decided int) []*certificatesv1.CertificateSigningRequest {
	items := make([]*certificatesv1.CertificateSigningRequest, 0, storm+decided)
	// Copies of a few templates: signing 50,000 requests would take the test
	// its time. One request body for the whole storm, as a kubelet reusing its
	// key sends; the grouping reads the decoded subject, not the bytes.
	like := func(t *certificatesv1.CertificateSigningRequest, name string, created time.Time) *certificatesv1.CertificateSigningRequest {
		c := t.DeepCopy()
		c.Name, c.UID, c.CreationTimestamp.Time = name, types.UID("uid-"+name), created
		return c
	}
	kubelet := qcsr(tb, "storm", certificatesv1.KubeAPIServerClientKubeletSignerName, "system:node:storm", "system:node:storm",
		now, CSRPending, time.Time{}, "system:nodes")
	for i := range storm {
		items = append(items, like(kubelet, fmt.Sprintf("storm-%05d", i), now.Add(-time.Duration(i)*time.Second)))
	}
	var users [300][2]*certificatesv1.CertificateSigningRequest
	for u := range users {
		users[u][0] = qcsr(tb, "t", apiClient, fmt.Sprintf("user-%03d", u), fmt.Sprintf("user-%03d", u), now, CSRIssued, now)
		users[u][1] = users[u][0].DeepCopy()
		users[u][1].Status = qcsr(tb, "t", apiClient, "x", "x", now, CSRDenied, now).Status
	}
	for i := range decided {
		c := like(users[i%300][i%2], fmt.Sprintf("csr-%05d", i), now.Add(-time.Duration(i)*time.Minute))
		for j := range c.Status.Conditions {
			c.Status.Conditions[j].LastUpdateTime.Time = now.Add(-time.Duration(i) * time.Second)
		}
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
	env := queueEnv{Now: now, Checks: csrqueue.Checks{Decode: memo.Decode}, MayDecide: func(string) bool { return true }, Cache: &csrqueue.Cache{}}
	for _, bc := range []struct {
		name string
		q    CSRQueueQuery
	}{
		{"first", CSRQueueQuery{}},
		{"filtered", CSRQueueQuery{Requester: "storm", State: CSRPending}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			runQueue(items, bc.q, env) // fills the memo and cache, as the first view does
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				p := runQueue(items, bc.q, env)
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
