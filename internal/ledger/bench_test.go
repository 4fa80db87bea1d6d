package ledger_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// LEDGER_BENCH_RECORDS is the size of the benchmarks' ledger: small by default
// (make test runs every benchmark once, timing nothing), 1,000,000 in make
// bench-ledger.
func benchRecords(b *testing.B) int {
	n := 2000
	if v := os.Getenv("LEDGER_BENCH_RECORDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("LEDGER_BENCH_RECORDS=%q: a number of at least 1000", v)
		}
	}
	return n
}

const (
	kubeletSigner = "kubernetes.io/kube-apiserver-client-kubelet"
	stormUser     = "system:node:storm-node-0001"
	benchUsers    = 5000
	benchSpan     = 90 * 24 * time.Hour // the entries spread over 90 days
)

// longName is a 253-character name (the longest a DNS subdomain name may be).
func longName(prefix string, i int) string {
	s := fmt.Sprintf("%s-%d-", prefix, i)
	return s + strings.Repeat("x", 253-len(s))
}

// bigCSR is a CSR object of about 20 KB (a request with 200 SANs).
var bigCSR = func() []byte {
	var sans []string
	for i := range 200 {
		sans = append(sans, fmt.Sprintf("%q", fmt.Sprintf("service-%03d.namespace-with-a-long-name.svc.cluster.local", i)))
	}
	pem := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=", 250)
	return []byte(`{"kind":"CertificateSigningRequest","apiVersion":"certificates.k8s.io/v1","spec":{"request":"` + pem +
		`","signerName":"example.com/serving","usages":["server auth"]},"sans":[` + strings.Join(sans, ",") + `]}`)
}()

// smallCSR is the object of an ordinary kubelet CSR entry (~1.5 KB).
var smallCSR = []byte(`{"kind":"CertificateSigningRequest","apiVersion":"certificates.k8s.io/v1","spec":{"request":"` +
	strings.Repeat("TUlJQlZqQ0IvUUlCQURBdk1SVXdFd1lEVlFRS0V3eHplWE4wWlcwNmJtOWtaWE14RmpBVUJnTlZCQU1URFhONWMzUmxiVHB1YjJS", 12) +
	`","signerName":"` + kubeletSigner + `","usages":["digital signature","client auth"]}}`)

// benchEntry is entry i of a worst-shape ledger of n: 40% a kubelet retry
// storm (one user, one signer, thousands of CSRs, each created, approved,
// issued), 30% CSRs of many nodes, 1% CSRs with 200 SANs (~20 KB), 10% the
// API server's status writes to CRDs whose objects were too big
// (ObjectDropped), the rest FlowSchema writes
// through the console with a diff; 253-character names throughout; times
// spread evenly over 90 days, oldest first.
func benchEntry(i, n int, start time.Time) ledger.Entry {
	e := ledger.Entry{
		Source: ledger.SourceAPIServer, ID: fmt.Sprintf("%08d-0000-4000-8000-%012d", i, i),
		Time:      start.Add(time.Duration(int64(benchSpan) / int64(n) * int64(i))),
		User:      fmt.Sprintf("user-%04d", i%benchUsers),
		Groups:    []string{"system:authenticated", "team-" + strconv.Itoa(i%50)},
		UserAgent: "kubectl/v1.37.2 (linux/amd64) kubernetes/abcdef", SourceIPs: []string{"10.1.2.3"},
		Verb: "update", APIVersion: "v1", Code: 200, Result: ledger.ResultOK,
	}
	csr := func(name string) {
		e.APIGroup, e.Resource, e.Kind, e.Name, e.Signer = "certificates.k8s.io", "certificatesigningrequests", "csrs", name, kubeletSigner
		e.UID = "uid-" + name[:20]
		switch i % 3 { // each CSR created, approved, issued
		case 0:
			e.Verb, e.Action, e.Object = "create", ledger.ActionCreate, smallCSR
		case 1:
			e.Subresource, e.Action, e.Reason = "approval", ledger.ActionApprove, "AutoApproved: kubelet client certificate"
		case 2:
			e.Subresource, e.Action, e.User = "status", ledger.ActionIssue, "system:kube-controller-manager"
		}
	}
	switch r := i % 100; {
	case r < 40:
		e.User = stormUser
		csr(longName("node-csr-storm", i/3))
	case r < 70:
		csr(longName("node-csr", i/3))
	case r < 71:
		csr(longName("serving-csr", i/3))
		e.Signer, e.Object = "example.com/serving", bigCSR
	case r < 81:
		// The API server's status writes to CRDs: the control plane's
		// housekeeping, which the ledger's list folds (issue 44).
		e.APIGroup, e.Resource, e.Kind, e.Subresource = "apiextensions.k8s.io", "customresourcedefinitions", "crds", "status"
		e.Name, e.Action, e.ObjectDropped = longName("crd.example.com", i%2000), ledger.ActionStatus, true
		e.User = "system:apiserver"
	default:
		e.Source, e.Kind, e.Name = ledger.SourceConsole, "flowschemas", longName("fs", i%500)
		e.APIGroup, e.Resource, e.Action = "flowcontrol.apiserver.k8s.io", "flowschemas", ledger.ActionUpdate
		e.Diff = "--- a\n+++ b\n@@ -1 +1 @@\n-  matchingPrecedence: 500\n+  matchingPrecedence: 600\n"
	}
	return e
}

var benchStart = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// buildLedger appends n worst-shape entries in big transactions.
func buildLedger(b *testing.B, s ledger.Store, n int) time.Duration {
	began := time.Now()
	const batch = 5000
	entries := make([]ledger.Entry, 0, batch)
	for i := range n {
		entries = append(entries, benchEntry(i, n, benchStart))
		if len(entries) == batch || i == n-1 {
			if _, err := s.Append(context.Background(), entries); err != nil {
				b.Fatal(err)
			}
			entries = entries[:0]
		}
	}
	return time.Since(began)
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func heapAfterGC() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// BenchmarkLedger builds a ledger of LEDGER_BENCH_RECORDS worst-shape entries
// on each backend and measures its pages, ingestion, size and start-up.
func BenchmarkLedger(b *testing.B) {
	n := benchRecords(b)
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			dsn := be.dsn(b)
			ctx := context.Background()
			s, err := ledger.Open(ctx, dsn, ledger.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { s.Close() }()
			took := buildLedger(b, s, n)
			analyze(b, dsn)

			mid := n / 2
			midEntry := benchEntry(mid-mid%300, n, benchStart) // a storm CSR created, then approved and issued
			week := benchStart.Add(benchSpan / 2)
			pages := []struct {
				name string
				q    ledger.Query
				min  int // rows the page must have: a benchmark of an empty page measures nothing
			}{
				{"history", ledger.Query{Kind: midEntry.Kind, Name: midEntry.Name, Oldest: true}, 1},
				{"filtered", ledger.Query{User: stormUser, Actions: []string{ledger.ActionApprove}, Since: week, Until: week.Add(7 * 24 * time.Hour)}, 1},
				// The worst filter: an action the storm's user never takes,
				// so the page reads every entry of the user in the window.
				{"filtered-rare", ledger.Query{User: stormUser, Actions: []string{ledger.ActionDeny}, Since: week, Until: week.Add(7 * 24 * time.Hour)}, 0},
				{"filtered-two", ledger.Query{User: stormUser, Actions: []string{ledger.ActionApprove, ledger.ActionDelete}, Since: week, Until: week.Add(7 * 24 * time.Hour)}, 1},
				{"signer", ledger.Query{Signer: kubeletSigner}, ledger.DefaultLimit},
				{"newest", ledger.Query{Kinds: []string{"csrs", "flowschemas"}}, ledger.DefaultLimit},
				// The ledger's first page as it opens: every kind, the
				// control plane's housekeeping folded (on the partial
				// index), and unfolded (housekeeping=show).
				{"first", ledger.Query{Kinds: []string{"csrs", "flowschemas", "crds"}, FoldHousekeeping: true}, ledger.DefaultLimit},
				{"first-unfolded", ledger.Query{Kinds: []string{"csrs", "flowschemas", "crds"}}, ledger.DefaultLimit},
			}
			for _, p := range pages {
				b.Run("page="+p.name, func(b *testing.B) {
					for b.Loop() {
						page, err := s.Query(ctx, p.q)
						if err != nil {
							b.Fatal(err)
						}
						if len(page.Entries) < p.min {
							b.Fatalf("%d entries, want at least %d", len(page.Entries), p.min)
						}
					}
				})
			}
			b.Run("page=signer-next", func(b *testing.B) {
				first, err := s.Query(ctx, ledger.Query{Signer: kubeletSigner, Since: week})
				if err != nil || first.Next == "" {
					b.Fatalf("first page: %v, next %q", err, first.Next)
				}
				for b.Loop() {
					if _, err := s.Query(ctx, ledger.Query{Signer: kubeletSigner, Since: week, After: first.Next}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("stats", func(b *testing.B) {
				for b.Loop() {
					if _, err := s.Stats(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("size", func(b *testing.B) {
				for b.Loop() {
				}
				b.ReportMetric(float64(storeBytes(b, dsn))/float64(n), "bytes/record")
				b.ReportMetric(float64(n)/took.Seconds(), "built-records/s")
			})
			// Ingestion: batches of 400 (the API server's), new entries after
			// the ledger's newest, the heap after GC before and after.
			next := n
			b.Run("ingest", func(b *testing.B) {
				before := heapAfterGC()
				batch := make([]ledger.Entry, 400)
				cpu := processCPU()
				b.ResetTimer()
				for b.Loop() {
					for i := range batch {
						batch[i] = benchEntry(next, n, benchStart)
						next++
					}
					if _, err := s.Append(ctx, batch); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(b.N*400)/b.Elapsed().Seconds(), "events/s")
				// The machine is shared: events per second of this process's
				// own CPU (SQLite's work is in it; PostgreSQL's is not) says
				// what the wall clock cannot when other work takes the cores.
				b.ReportMetric(float64(b.N*400)/(processCPU()-cpu).Seconds(), "events/cpu-s")
				b.ReportMetric(before, "heap-before-MB")
				b.ReportMetric(heapAfterGC(), "heap-after-MB")
			})
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.Run("startup", func(b *testing.B) {
				for b.Loop() {
					s2, err := ledger.Open(ctx, dsn, ledger.Options{})
					if err != nil {
						b.Fatal(err)
					}
					if _, err := s2.Query(ctx, ledger.Query{Limit: 1}); err != nil {
						b.Fatal(err)
					}
					s2.Close()
				}
			})
			s, err = ledger.Open(ctx, dsn, ledger.Options{}) // for the deferred Close
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

// analyze gives PostgreSQL's planner its statistics, as autovacuum would
// soon after a bulk load.
func analyze(b *testing.B, dsn string) {
	if strings.HasPrefix(dsn, "sqlite:") {
		return
	}
	if _, err := rawDB(b, dsn).Exec("ANALYZE ledger_entries"); err != nil {
		b.Fatal(err)
	}
}

// storeBytes is the ledger's size on disk: the SQLite file with its WAL, or
// PostgreSQL's table with its indexes and TOAST.
func storeBytes(b *testing.B, dsn string) int64 {
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		var total int64
		for _, f := range []string{path, path + "-wal"} {
			if fi, err := os.Stat(f); err == nil {
				total += fi.Size()
			}
		}
		return total
	}
	var size int64
	if err := rawDB(b, dsn).QueryRow("SELECT pg_total_relation_size('ledger_entries')").Scan(&size); err != nil {
		b.Fatal(err)
	}
	return size
}
