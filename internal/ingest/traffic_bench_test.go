package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// readEvent is a Metadata read at ResponseComplete, as the shipped policy
// reports it, of the given flow (a user with a 253-character name of its
// own and a namespace of 253 characters: the longest names Kubernetes
// allows), received at second sec.
func readEvent(i, flow int, sec int64) auditv1.Event {
	pad := func(prefix string) string { return prefix + strings.Repeat("x", 253-len(prefix)) }
	received := time.Unix(1_700_000_000+sec, int64(i%1000)*int64(time.Millisecond))
	return auditv1.Event{
		Level: auditv1.LevelMetadata, AuditID: types.UID(fmt.Sprintf("read-%d", i)), Stage: auditv1.StageResponseComplete,
		Verb: "list", RequestURI: "/api/v1/namespaces/ns/configmaps?limit=500",
		User:                     authnv1.UserInfo{Username: pad(fmt.Sprintf("system:serviceaccount:ci:reader-%d-", flow)), Groups: []string{"system:serviceaccounts", "system:authenticated"}},
		ObjectRef:                &auditv1.ObjectReference{Resource: "configmaps", Namespace: pad(fmt.Sprintf("ns-%d-", flow%50)), APIVersion: "v1"},
		ResponseStatus:           &metav1.Status{Code: 200},
		RequestReceivedTimestamp: metav1.NewMicroTime(received),
		StageTimestamp:           metav1.NewMicroTime(received.Add(time.Duration(i%40) * time.Millisecond)),
		Annotations:              map[string]string{"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": `RBAC: allowed by ClusterRoleBinding "readers"`},
	}
}

// BenchmarkTrafficIngest measures the audit webhook's ingest of reads into
// the recorded traffic, batches of 400 (the API server's batch size) posted
// to the Receiver, on SQLite and PostgreSQL, in two shapes:
//
//   - burst: 10,000 flows (a user each) in one second, every event a flow
//     of its own within its batch: 400 series and 400 bucket upserts a
//     batch, the worst case of the fold;
//   - steady: 1,000 requests a second over 2,000 flows, each second's
//     requests 1,000 distinct flows (the worst spread: random choice would
//     make about 790), the day the size estimate is of.
//
// It reports events/s (wall), buckets stored, bytes per bucket (the
// database's size over its buckets) and, for steady, the database's growth
// per day while buckets are seconds (the first day; later ones are minutes,
// MB/day-minutes). The estimate wants a few hundred batches
// (-benchtime=500x); make test's single batch only proves the path.
func BenchmarkTrafficIngest(b *testing.B) {
	for _, be := range benchBackends {
		for _, shape := range []struct {
			name       string
			flows, rps int
		}{{"burst", 10_000, 10_000}, {"steady", 2_000, 1_000}} {
			b.Run(be.name+"/"+shape.name, func(b *testing.B) {
				benchTraffic(b, be.dsn(b), shape.flows, shape.rps)
			})
		}
	}
}

func benchTraffic(b *testing.B, dsn string, flows, rps int) {
	st, err := ledger.Open(context.Background(), dsn, ledger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ts := st.(ledger.TrafficStore)
	rc, err := NewReceiver(Options{Store: st, Traffic: ts, Senders: Senders{Token: testToken}})
	if err != nil {
		b.Fatal(err)
	}
	next := 0
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		list := auditv1.EventList{Items: make([]auditv1.Event, 400)}
		for j := range list.Items {
			// Flows in turn (i*7919 walks them all, a prime stride so that
			// a batch's neighbours differ), rps a second.
			list.Items[j] = readEvent(next, next*7919%flows, int64(next/rps))
			next++
		}
		body, err := json.Marshal(list)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if w := post(rc, testToken, body); w.Code != http.StatusOK {
			b.Fatalf("batch: %d %s", w.Code, w.Body)
		}
	}
	b.StopTimer()
	stats, err := ts.TrafficStats(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if stats.Buckets == 0 {
		b.Fatal("no bucket stored")
	}
	perBucket := float64(dbBytes(b, dsn, "traffic_buckets", "traffic_series")) / float64(stats.Buckets)
	b.ReportMetric(float64(next)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(stats.Buckets), "buckets")
	b.ReportMetric(perBucket, "B/bucket")
	if rps < flows {
		// Buckets a second: the distinct flows among rps requests, as
		// stored over the seconds the run covered.
		seconds := float64(next) / float64(rps)
		perSecond := float64(stats.Buckets) / seconds
		b.ReportMetric(perSecond*86400*perBucket/1e6, "MB/day-seconds")
		// Past a day a flow is a bucket a minute at most.
		b.ReportMetric(float64(min(flows, rps*60))*1440*perBucket/1e6, "MB/day-minutes")
	}
}
