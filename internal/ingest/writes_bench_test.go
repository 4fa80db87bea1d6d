package ingest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
	"github.com/clusterdesk/clusterdesk/internal/testpg"
)

// benchPG is BenchmarkIngestWrites' PostgreSQL, started on first use
// (initdb takes seconds: the unit tests need none) and stopped by the test
// binary's end (TestMain).
var benchPG struct {
	once sync.Once
	srv  *testpg.Server
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchPG.srv != nil {
		if err := benchPG.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// trafficEvent is the i-th event of a cluster's write traffic as the
// shipped audit policy (deploy/audit-webhook/policy.yaml) reports it: 80%
// at RequestResponse (patches of Deployments, updates of ConfigMaps,
// creates of Pods, custom resources and Namespaces, each object 1-2 KiB as
// the API server writes them, managed fields and all), 20% at Metadata
// (Lease renewals, Events, Secrets: received, kept in no recorded write).
func trafficEvent(i int) auditv1.Event {
	ns, obj := fmt.Sprintf("team-%d", i%20), i%2000
	ev := auditv1.Event{
		Level: auditv1.LevelRequestResponse, AuditID: types.UID(fmt.Sprintf("bench-%d", i)), Stage: auditv1.StageResponseComplete,
		User:                     authnv1.UserInfo{Username: fmt.Sprintf("system:serviceaccount:ci:deployer-%d", i%7), Groups: []string{"system:serviceaccounts", "system:authenticated"}},
		ResponseStatus:           &metav1.Status{Code: 200},
		RequestReceivedTimestamp: metav1.NewMicroTime(time.Unix(1_700_000_000, int64(i)*int64(time.Millisecond))),
		Annotations:              map[string]string{"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": `RBAC: allowed by ClusterRoleBinding "deployers"`},
	}
	meta := fmt.Sprintf(`"metadata":{"name":"obj-%d","namespace":%q,"uid":"5f0c%08d-aaaa-bbbb-cccc-0123456789ab","resourceVersion":"%d","generation":%d,"labels":{"app":"app-%d","team":%q},"annotations":{"owner":"someone@example.com"},"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:app":{},"f:team":{}}},"f:spec":{"f:replicas":{}}}}]}`,
		obj, ns, obj, 1000+i, i/2000+1, obj, ns)
	env := strings.Repeat(fmt.Sprintf(`{"name":"VAR_%d","value":"value-%d"},`, obj%7, i/2000), 8)
	body := func(apiVersion, kind, rest string) string {
		return `{"apiVersion":"` + apiVersion + `","kind":"` + kind + `",` + meta + rest + `}`
	}
	set := func(verb, group, version, resource, obj string) {
		ev.Verb, ev.ObjectRef = verb, &auditv1.ObjectReference{Resource: resource, Namespace: ns, Name: fmt.Sprintf("obj-%d", i%2000), APIGroup: group, APIVersion: version}
		if obj != "" {
			ev.RequestObject, ev.ResponseObject = &runtime.Unknown{Raw: []byte(obj)}, &runtime.Unknown{Raw: []byte(obj)}
		}
		if verb == "create" {
			ev.ResponseStatus.Code = 201
		}
	}
	switch r := i % 20; {
	case r < 6:
		set("patch", "apps", "v1", "deployments", body("apps/v1", "Deployment", `,"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"app","image":"registry.example.com/app:`+fmt.Sprint(i/2000)+`","env":[`+env+`{"name":"LAST","value":"x"}]}]}}}`))
		ev.RequestObject = &runtime.Unknown{Raw: []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example.com/app:` + fmt.Sprint(i/2000) + `"}]}}}}`)}
	case r < 10:
		set("update", "", "v1", "configmaps", body("v1", "ConfigMap", `,"data":{"config.yaml":"`+strings.Repeat("key: value\\n", 60)+`"}`))
	case r < 13:
		set("create", "", "v1", "pods", body("v1", "Pod", `,"spec":{"containers":[{"name":"app","image":"registry.example.com/app:1","env":[`+env+`{"name":"LAST","value":"x"}]}]},"status":{"phase":"Pending"}`))
	case r < 15:
		set("update", "example.com", "v1", "widgets", body("example.com/v1", "Widget", `,"spec":{"size":`+fmt.Sprint(i%9)+`,"owner":"team"}`))
	case r < 16:
		set("create", "", "v1", "namespaces", body("v1", "Namespace", `,"spec":{"finalizers":["kubernetes"]}`))
		ev.ObjectRef.Namespace = ""
	case r < 18:
		set("update", "coordination.k8s.io", "v1", "leases", "")
		ev.Level = auditv1.LevelMetadata
	case r < 19:
		set("create", "", "v1", "events", "")
		ev.Level = auditv1.LevelMetadata
	default:
		set("create", "", "v1", "secrets", "")
		ev.Level = auditv1.LevelMetadata
	}
	return ev
}

// BenchmarkIngestWrites measures the audit webhook's ingest with the
// shipped policy's traffic (trafficEvent): batches of 400 events (the API
// server's batch size) posted to the Receiver, which maps them, stores the
// console's kinds' ledger entries and every recorded write; on SQLite and
// on PostgreSQL. It reports events and recorded writes per second of wall
// and of this process's CPU, and the database's size per 100,000 recorded
// writes (SQLite: the file; PostgreSQL: recorded_writes and ledger_entries
// with their indexes). make bench-replay runs 250 batches (100,000 events);
// make test's unit layer one.
func BenchmarkIngestWrites(b *testing.B) {
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			dsn := be.dsn(b)
			st, err := ledger.Open(context.Background(), dsn, ledger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			rc, err := NewReceiver(Options{Store: st, Writes: st.(ledger.WriteStore), Senders: Senders{Token: testToken}})
			if err != nil {
				b.Fatal(err)
			}
			next := 0
			var cpu time.Duration
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				list := auditv1.EventList{Items: make([]auditv1.Event, 400)}
				for j := range list.Items {
					list.Items[j] = trafficEvent(next)
					next++
				}
				body, err := json.Marshal(list)
				if err != nil {
					b.Fatal(err)
				}
				before := processCPU()
				b.StartTimer()
				if w := post(rc, testToken, body); w.Code != http.StatusOK {
					b.Fatalf("batch: %d %s", w.Code, w.Body)
				}
				b.StopTimer()
				cpu += processCPU() - before
				b.StartTimer()
			}
			b.StopTimer()
			n := rc.Counts()
			if n.Writes == 0 || n.Received != int64(next) {
				b.Fatalf("received %d of %d events, %d writes recorded", n.Received, next, n.Writes)
			}
			b.ReportMetric(float64(next)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(next)/cpu.Seconds(), "events/cpu-s")
			b.ReportMetric(float64(n.Writes)/b.Elapsed().Seconds(), "writes/s")
			b.ReportMetric(float64(dbBytes(b, dsn, "recorded_writes", "ledger_entries"))/float64(n.Writes)*100_000/(1<<20), "MB/100k-writes")
		})
	}
}

// benchBackends are the databases the ingest benchmarks store into, each a
// fresh one.
var benchBackends = []struct {
	name string
	dsn  func(b *testing.B) string
}{
	{"sqlite", func(b *testing.B) string { return "sqlite:" + filepath.Join(b.TempDir(), "l.db") }},
	{"postgres", func(b *testing.B) string {
		benchPG.once.Do(func() { benchPG.srv, benchPG.err = testpg.Start() })
		if benchPG.err != nil {
			b.Fatal(benchPG.err)
		}
		dsn, err := benchPG.srv.NewDatabase()
		if err != nil {
			b.Fatal(err)
		}
		return dsn
	}},
}

// dbBytes is the database's size: SQLite's file and its WAL (the whole
// file), PostgreSQL's tables with their indexes.
func dbBytes(b *testing.B, dsn string, tables ...string) int64 {
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		// The WAL's pages into the file first: a WAL of up to a few MB
		// would otherwise count pages twice.
		if db, err := sql.Open("sqlite", path); err == nil {
			_, _ = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
			db.Close()
		}
		var total int64
		for _, f := range []string{path, path + "-wal"} {
			if fi, err := os.Stat(f); err == nil {
				total += fi.Size()
			}
		}
		return total
	}
	var size int64
	db, err := sql.Open("pgx", dsn) // the driver internal/ledger registers
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, t := range tables {
		var n int64
		if err := db.QueryRow("SELECT pg_total_relation_size($1)", t).Scan(&n); err != nil {
			b.Fatal(err)
		}
		size += n
	}
	return size
}
