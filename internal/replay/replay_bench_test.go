package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS starts the kernel's count of this process's peak RSS afresh
// (proc(5), clear_refs "5"); peakRSS reads it (VmHWM), 0 where /proc has none.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// benchSizes are how many recorded writes BenchmarkReplay replays:
// REPLAY_BENCH_WRITES, a comma-separated list (make bench-replay:
// 10000,100000, the bound), 10,000 by default.
func benchSizes(b *testing.B) []int {
	v := os.Getenv("REPLAY_BENCH_WRITES")
	if v == "" {
		return []int{10_000}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("REPLAY_BENCH_WRITES=%q", v)
		}
		out = append(out, n)
	}
	return out
}

// The worst realistic shapes mixed into the bench's traffic.
const (
	// benchObjects are the ConfigMaps the ordinary traffic writes.
	benchObjects = 2000
	// benchLongNameEvery: every 10th object has a name of 253 characters,
	// the longest a DNS subdomain may be (IsDNS1123Subdomain).
	benchLongNameEvery = 10
	// benchHugeEvery: every 250th write carries a 128 KiB annotation
	// (kubectl's last-applied-configuration of a large object), half of
	// what the store keeps (ledger.MaxObjectBytes).
	benchHugeEvery = 250
	benchHugeBytes = 128 << 10
	// benchStormEvery: every 3rd write is one service account's storm,
	// updating 20 ConfigMaps of one namespace again and again, each one a
	// change the draft denies.
	benchStormEvery = 3
	benchStormUser  = "system:serviceaccount:ci:storm"
)

// benchName is object obj's name: 253 characters for every
// benchLongNameEvery-th.
func benchName(obj int) string {
	name := fmt.Sprintf("cm-%d", obj)
	if obj%benchLongNameEvery == 0 {
		name += "-" + strings.Repeat("x", 253-len(name)-1)
	}
	return name
}

// hugeAnnotation is benchHugeBytes of text that compresses as real JSON of
// a large object does (a few distinct lines repeated with counters), not
// as a run of one byte would.
func hugeAnnotation(i int) string {
	var b strings.Builder
	for n := 0; b.Len() < benchHugeBytes; n++ {
		fmt.Fprintf(&b, `{\"name\":\"VAR_%d_%d\",\"value\":\"%x\"},`, i%97, n, uint64(n)*2654435761^uint64(i))
	}
	return b.String()[:benchHugeBytes]
}

// benchWrite is the i-th recorded write of the bench's traffic: creates,
// then updates of benchObjects ConfigMaps of about 1 KiB in 50 namespaces
// by 10 users, every benchStormEvery-th a storm write, every
// benchHugeEvery-th with a huge annotation.
func benchWrite(i int) ledger.Write {
	user, obj, ns := fmt.Sprintf("user-%d", i%10), i%benchObjects, ""
	op := ledger.OpUpdate
	if i < benchObjects {
		op = ledger.OpCreate
	}
	mode := []string{"fine", "forbidden", "ok", "strict"}[(i/7)%4]
	if i >= benchObjects && i%benchStormEvery == 0 {
		user, obj, mode = benchStormUser, (i/benchStormEvery)%20, "forbidden"
		ns = "storm"
	}
	if ns == "" {
		ns = fmt.Sprintf("ns-%d", obj%50)
	}
	name := benchName(obj)
	if ns == "storm" {
		name = fmt.Sprintf("storm-%d", obj)
	}
	w := cm(user, ns, name, op, 200, mode)
	w.ID, w.AuditID = fmt.Sprint("bench-", i), fmt.Sprint("bench-audit-", i)
	w.Time = at0.Add(time.Duration(i) * time.Millisecond)
	anns := fmt.Sprintf(`"owner":"team-%d"`, obj%5)
	if i%benchHugeEvery == 0 {
		anns += `,"kubectl.kubernetes.io/last-applied-configuration":"` + hugeAnnotation(i) + `"`
	}
	var obuf bytes.Buffer
	fmt.Fprintf(&obuf, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q,"labels":{"app":"web","tier":"t%d"},"annotations":{%s}},"data":{"mode":%q,"owner":"team-%d","config":"%0600d"}}`,
		name, ns, obj%3, anns, mode, (i/benchObjects)%3, i)
	w.Object = obuf.Bytes()
	return w
}

// benchStore opens a ledger at dsn holding the first n writes of the
// bench's traffic, appended as the audit webhook does (batches of 400).
func benchStore(b *testing.B, dsn string, n int) ledger.WriteStore {
	st, err := ledger.Open(context.Background(), dsn, ledger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ws := st.(ledger.WriteStore)
	batch := make([]ledger.Write, 0, 400)
	for i := range n {
		batch = append(batch, benchWrite(i))
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := ws.AppendWrites(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	return ws
}

// BenchmarkReplay replays n recorded writes (benchWrite's traffic) stored in
// a real ledger, an SQLite file and a PostgreSQL database, against a draft
// and a deployed version of a policy with a matchCondition, a
// namespaceSelector and two validations, one on oldObject. It reports the
// time of one replay, writes per second, this process's CPU, and the peak
// heap in use (sampled at each progress call) and peak RSS while it runs.
func BenchmarkReplay(b *testing.B) {
	backends := []struct {
		name string
		dsn  func(b *testing.B) string
	}{
		{"sqlite", func(b *testing.B) string { return "sqlite:" + filepath.Join(b.TempDir(), "l.db") }},
		{"postgres", func(b *testing.B) string { return pgDSN(b) }},
	}
	for _, n := range benchSizes(b) {
		for _, be := range backends {
			b.Run(fmt.Sprintf("%s/%d", be.name, n), func(b *testing.B) { benchReplay(b, benchStore(b, be.dsn(b), n), n) })
		}
	}
}

func benchReplay(b *testing.B, st ledger.WriteStore, n int) {
	var nss []*corev1.Namespace
	for i := range 50 {
		nss = append(nss, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ns-%d", i), Labels: map[string]string{"env": []string{"prod", "dev"}[i%2]}}})
	}
	nss = append(nss, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "storm", Labels: map[string]string{"env": "prod"}}})
	validations := []admissionregistrationv1.Validation{
		{Expression: "object.data.mode != 'forbidden'", Message: "mode forbidden"},
		{Expression: "oldObject == null || object.data.owner == oldObject.data.owner", MessageExpression: "'owner changed from ' + oldObject.data.owner"},
	}
	mod := func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "not-user-0", Expression: "request.userInfo.username != 'user-0'"}}
	}
	prod := func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
	}
	dev := func(s *admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec) {
		s.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}
	}
	warnDev := binding("p", warn, dev)
	warnDev.Name = "p-warn-dev"
	// The draft is bound twice (Deny in prod, Warn in dev): every request
	// the policy matches is evaluated for both bindings' matchResources.
	o := Options{Writes: st, Namespaces: nss,
		Draft:    Version{policy("p", validations, mod), bs(binding("p", deny, prod), warnDev)},
		Deployed: &Version{policy("p", validations[:1], mod), bs(binding("p", audit, prod))}}
	var peak uint64
	var ms runtime.MemStats
	o.Progress = func(Progress) {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	// What the setup (appending n writes) left in the heap goes back to the
	// kernel first: the peak RSS is then the replay's own.
	debug.FreeOSMemory()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var sum Summary
	resetPeakRSS()
	cpu := processCPU()
	b.ResetTimer()
	for b.Loop() {
		var err error
		if sum, err = Run(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if sum.Scanned != int64(n) || sum.NewlyDenied == 0 {
		b.Fatalf("replayed %d of %d writes, %d newly denied", sum.Scanned, n, sum.NewlyDenied)
	}
	perRun := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(perRun.Seconds(), "s/replay")
	// The machine is shared: this process's CPU per replay says what the
	// wall clock cannot when other work takes the cores.
	b.ReportMetric((processCPU()-cpu).Seconds()/float64(b.N), "cpu-s/replay")
	b.ReportMetric(float64(n)/perRun.Seconds(), "writes/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(base)/(1<<20), "heap-before-MB")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MB")
}
