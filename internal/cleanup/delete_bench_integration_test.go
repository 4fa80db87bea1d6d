//go:build integration

package cleanup

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// benchLabel marks the CSIDrivers a deletion benchmark creates.
const benchLabel = "clusterdesk-cleanup-bench"

// benchSizes are the numbers of objects deleted per round:
// $CLEANUP_BENCH_SIZES (e.g. "1000,5000"), 1000 when unset, so that the
// setup (creating the objects) stays bounded by default.
func benchSizes(b *testing.B) []int {
	spec := os.Getenv("CLEANUP_BENCH_SIZES")
	if spec == "" {
		spec = "1000"
	}
	var out []int
	for _, s := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			b.Fatalf("CLEANUP_BENCH_SIZES: %q is not a number of objects", s)
		}
		out = append(out, n)
	}
	return out
}

// BenchmarkCleanupDelete times deleting n labelled CSIDrivers on the
// devcluster, as the admin: the cleanup's way (Service.Delete: one DELETE per
// object with its UID as precondition, Workers at a time, through
// kube.Editor and so at kube.DeleteQPS), the same at the per-user clients'
// general 20 QPS, and the deletecollection by label selector the cleanup
// used before (one request; the API
// server deletes whatever matches when it runs). Creating the objects is not
// timed.
func BenchmarkCleanupDelete(b *testing.B) {
	cfg := testcluster.RestConfig(b, testcluster.Admin)
	fast := *cfg
	fast.QPS, fast.Burst = -1, 0 // the setup's creations are not what is measured
	cs := kubernetes.NewForConfigOrDie(&fast)
	ed, err := kube.NewEditor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	// The same deletions through a client limited as the per-user clients'
	// other requests are (20 QPS, burst 40: kube.clientConfig), for comparison.
	limited := rest.CopyConfig(cfg)
	limited.QPS, limited.Burst = 20, 40
	slow := limitedDeleter{dynamic.NewForConfigOrDie(limited)}
	k := kube.Kind{ID: kube.CSIDrivers, Singular: "CSIDriver", Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers"}
	ctx := context.Background()
	for _, n := range benchSizes(b) {
		for _, way := range []string{"uid-preconditioned", "uid-preconditioned-at-20qps", "deletecollection"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, way), func(b *testing.B) {
				for range b.N {
					b.StopTimer()
					run := fmt.Sprintf("b%d", time.Now().UnixNano())
					items := createBenchDrivers(b, cs, run, n)
					b.StartTimer()
					start := time.Now()
					switch way {
					case "uid-preconditioned":
						out := (&Service{API: ed}).Delete(ctx, Target{Kind: k}, items)
						if c := Counts(out); c[Deleted] != n {
							b.Fatalf("deleted %v, want %d", c, n)
						}
					case "uid-preconditioned-at-20qps":
						out := (&Service{API: slow}).Delete(ctx, Target{Kind: k}, items)
						if c := Counts(out); c[Deleted] != n {
							b.Fatalf("deleted %v, want %d", c, n)
						}
					case "deletecollection":
						if err := cs.StorageV1().CSIDrivers().DeleteCollection(ctx, metav1.DeleteOptions{},
							metav1.ListOptions{LabelSelector: benchLabel + "=" + run}); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(n)/time.Since(start).Seconds(), "objects/s")
				}
			})
		}
	}
}

// limitedDeleter deletes with its UID precondition through its own client.
type limitedDeleter struct{ dyn dynamic.Interface }

func (d limitedDeleter) Delete(ctx context.Context, k kube.Kind, name string, uid types.UID, dry bool, _ metav1.DeletionPropagation) (kube.WriteResult, error) {
	r := d.dyn.Resource(schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Resource})
	return kube.WriteResult{}, r.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
}

// createBenchDrivers creates n CSIDrivers labelled run, 16 at a time, and
// returns them as cleanup candidates (deleted when the benchmark ends if
// still there).
func createBenchDrivers(b *testing.B, cs kubernetes.Interface, run string, n int) []Candidate {
	b.Helper()
	items := make([]Candidate, n)
	next := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				name := fmt.Sprintf("bench-%s-%05d.example.com", run, i)
				d, err := cs.StorageV1().CSIDrivers().Create(context.Background(), &storagev1.CSIDriver{
					ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{benchLabel: run}},
				}, metav1.CreateOptions{})
				if err != nil {
					once.Do(func() { first = err })
					continue
				}
				items[i] = Candidate{Name: name, UID: string(d.UID)}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	b.Cleanup(func() {
		_ = cs.StorageV1().CSIDrivers().DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: benchLabel + "=" + run})
	})
	if first != nil {
		b.Fatal(first)
	}
	return items
}
