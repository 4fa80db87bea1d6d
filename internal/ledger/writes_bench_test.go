package ledger_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// benchWriteObject is a Deployment-shaped object of about 1.3 KiB of JSON
// (labels, annotations, a pod template with one container and its env,
// managed fields), an ordinary object of a cluster's writes.
func benchWriteObject(i, version int) []byte {
	env := strings.Repeat(fmt.Sprintf(`{"name":"VAR_%d","value":"value-%d"},`, i%7, version), 12)
	return fmt.Appendf(nil, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app-%d","namespace":"team-%d","uid":"5f0c%08d-aaaa-bbbb-cccc-0123456789ab","resourceVersion":"%d","generation":%d,"labels":{"app":"app-%d","team":"team-%d","tier":"backend"},"annotations":{"deployment.kubernetes.io/revision":"%d","owner":"someone@example.com"},"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:image":{},"f:env":{}}}}}}}}]},"spec":{"replicas":%d,"selector":{"matchLabels":{"app":"app-%d"}},"template":{"metadata":{"labels":{"app":"app-%d"}},"spec":{"containers":[{"name":"app","image":"registry.example.com/team/app:%d","env":[%s{"name":"LAST","value":"x"}],"resources":{"limits":{"cpu":"500m","memory":"256Mi"}}}]}}},"status":{"observedGeneration":%d,"replicas":%d}}`,
		i, i%20, i, 1000+version, version, i, i%20, version, version%5+1, i, i, version, env, version, version%5+1)
}

// BenchmarkAppendWrites measures the recorded writes' share of the audit
// webhook's ingest: batches of 400 (the API server's), updates of 2,000
// Deployments (each write looks up its object's previous one), on each
// backend; writes per second of wall and of this process's CPU, and the
// database's bytes per write.
func BenchmarkAppendWrites(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			dsn := be.dsn(b)
			s, err := ledger.Open(context.Background(), dsn, ledger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			w := s.(ledger.WriteStore)
			ctx := context.Background()
			batch := make([]ledger.Write, 400)
			next := 0
			cpu := processCPU()
			b.ResetTimer()
			for b.Loop() {
				for i := range batch {
					obj := next % 2000
					batch[i] = ledger.Write{ID: fmt.Sprint(next), AuditID: fmt.Sprint(next), Time: time.Unix(1_700_000_000, int64(next)),
						User: "system:serviceaccount:ci:deployer", Groups: []string{"system:serviceaccounts", "system:authenticated"},
						Verb: "patch", Operation: ledger.OpUpdate, APIGroup: "apps", APIVersion: "v1", Resource: "deployments",
						Namespace: fmt.Sprintf("team-%d", obj%20), Name: fmt.Sprintf("app-%d", obj), Code: 200,
						Object: benchWriteObject(obj, next/2000), Annotations: map[string]string{"authorization.k8s.io/decision": "allow"}}
					next++
				}
				if _, err := w.AppendWrites(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(next)/b.Elapsed().Seconds(), "writes/s")
			b.ReportMetric(float64(next)/(processCPU()-cpu).Seconds(), "writes/cpu-s")
			size := storeBytes(b, dsn) // SQLite: the file, with the ledger's empty tables
			if !strings.HasPrefix(dsn, "sqlite:") {
				if err := rawDB(b, dsn).QueryRow("SELECT pg_total_relation_size('recorded_writes')").Scan(&size); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(size)/float64(next), "bytes/write")
			b.ReportMetric(float64(len(benchWriteObject(1, 1))), "object-bytes")
		})
	}
}
