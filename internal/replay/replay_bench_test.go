package replay

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
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

// benchWrites is how many recorded writes BenchmarkReplay replays:
// REPLAY_BENCH_WRITES (100000 for the bound), 10,000 by default.
func benchWrites(b *testing.B) int {
	if v := os.Getenv("REPLAY_BENCH_WRITES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("REPLAY_BENCH_WRITES=%q", v)
		}
		return n
	}
	return 10_000
}

// BenchmarkReplay replays n recorded writes (creates and updates of 2,000
// ConfigMaps of about 1 KiB in 50 namespaces by 10 users, each update with
// its object before) against a draft and a deployed version of a policy
// with a matchCondition, a namespaceSelector and two validations, one on
// oldObject; it reports the time of one replay, writes per second and the
// peak heap in use while it runs (sampled at each progress call).
func BenchmarkReplay(b *testing.B) {
	n := benchWrites(b)
	writes := make([]ledger.Write, n)
	for i := range writes {
		obj := i % 2000
		op := ledger.OpUpdate
		if i < 2000 {
			op = ledger.OpCreate
		}
		mode := []string{"fine", "forbidden", "ok", "strict"}[(i/7)%4]
		w := cm(fmt.Sprintf("user-%d", i%10), fmt.Sprintf("ns-%d", obj%50), fmt.Sprintf("cm-%d", obj), op, 200, mode)
		w.ID, w.Object = fmt.Sprint("bench-", i), fmt.Appendf(nil,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d","namespace":"ns-%d","labels":{"app":"web","tier":"t%d"},"annotations":{"owner":"team-%d"}},"data":{"mode":%q,"owner":"team-%d","config":"%0600d"}}`,
			obj, obj%50, obj%3, obj%5, mode, (i/2000)%3, i)
		writes[i] = w
	}
	st := newStore(b, writes)
	var nss []*corev1.Namespace
	for i := range 50 {
		nss = append(nss, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ns-%d", i), Labels: map[string]string{"env": []string{"prod", "dev"}[i%2]}}})
	}
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
	o := Options{Writes: st, Namespaces: nss,
		Draft:    Version{policy("p", validations, mod), binding("p", deny, prod)},
		Deployed: &Version{policy("p", validations[:1], mod), binding("p", audit, prod)}}
	var peak uint64
	var ms runtime.MemStats
	o.Progress = func(Progress) {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var sum Summary
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
}
