package kube_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// The estate measurements put n real-world CRDs (the shared fixtures, each
// copied under generated group names, the largest first) through an
// informer's transform into an informer's store, and read the live heap
// after a full GC: what the CRD cache holds per 1,000 CRDs, without an API
// server (whose LIST and watch decoding allocate the same objects).

var (
	fixtureOnce sync.Once
	fixtureJSON [][]byte
	fixtureErr  error

	largestOnce sync.Once
	largestJSON [][]byte
	largestErr  error
)

// crdFixtureFiles are the shared real-world CRD fixture files.
func crdFixtureFiles() ([]string, error) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "shared", "fixtures", "real", "customresourcedefinitions", "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no CRD fixtures in ../shared (is it beside the repository?): %v", err)
	}
	return files, nil
}

// crdJSONOf returns the CRDs of one fixture file as JSON.
func crdJSONOf(f string) ([][]byte, error) {
	raw, err := os.ReadFile(f)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for doc := range strings.SplitSeq(string(raw), "\n---\n") {
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		var probe struct{ Kind string }
		if json.Unmarshal(j, &probe) == nil && probe.Kind == "CustomResourceDefinition" {
			out = append(out, j)
		}
	}
	return out, nil
}

// crdJSONOfFiles converts files in order until it has at least want CRDs
// (every file when want is 0) and returns them largest first.
func crdJSONOfFiles(files []string, want int) ([][]byte, error) {
	var out [][]byte
	for _, f := range files {
		if want > 0 && len(out) >= want {
			break
		}
		crds, err := crdJSONOf(f)
		if err != nil {
			return nil, err
		}
		out = append(out, crds...)
	}
	if len(out) < want {
		return nil, fmt.Errorf("%d CRDs among the fixtures, want at least %d", len(out), want)
	}
	slices.SortStableFunc(out, func(a, b []byte) int { return len(b) - len(a) })
	return out, nil
}

// realCRDJSON returns every CRD among the shared real-world fixtures as JSON,
// largest first.
func realCRDJSON(tb testing.TB) [][]byte {
	tb.Helper()
	fixtureOnce.Do(func() {
		files, err := crdFixtureFiles()
		if err == nil {
			fixtureJSON, err = crdJSONOfFiles(files, 0)
		}
		fixtureErr = err
	})
	if fixtureErr != nil {
		tb.Fatal(fixtureErr)
	}
	return fixtureJSON
}

// largestCRDJSON returns at least two CRDs, those of the largest fixture
// files on disk (megabyte schemas), largest first: for the tests that need a
// big real CRD, not every one, and run under the race detector, where
// converting all of the fixtures (realCRDJSON) took 21 s of CI's unit layer
// and converting the largest files takes about one.
func largestCRDJSON(tb testing.TB) [][]byte {
	tb.Helper()
	largestOnce.Do(func() {
		files, err := crdFixtureFiles()
		if err != nil {
			largestErr = err
			return
		}
		size := make(map[string]int64, len(files))
		for _, f := range files {
			fi, err := os.Stat(f)
			if err != nil {
				largestErr = err
				return
			}
			size[f] = fi.Size()
		}
		slices.SortStableFunc(files, func(a, b string) int { return int(size[b] - size[a]) })
		largestJSON, largestErr = crdJSONOfFiles(files, 2)
	})
	if largestErr != nil {
		tb.Fatal(largestErr)
	}
	return largestJSON
}

// estateCRD decodes fixture as the i-th CRD of an estate: its own group and
// name, and what the API server adds (uid, resourceVersion, status).
func estateCRD(tb testing.TB, fixture []byte, i int) *apiextensionsv1.CustomResourceDefinition {
	var c apiextensionsv1.CustomResourceDefinition
	if err := json.Unmarshal(fixture, &c); err != nil {
		tb.Fatal(err)
	}
	c.Spec.Group = fmt.Sprintf("g%04d.crdmem.bench.clusterdesk.test", i)
	c.Name = c.Spec.Names.Plural + "." + c.Spec.Group
	c.UID = types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
	c.ResourceVersion = fmt.Sprint(1000 + i)
	c.Status.AcceptedNames = c.Spec.Names
	for _, v := range c.Spec.Versions {
		if v.Storage {
			c.Status.StoredVersions = append(c.Status.StoredVersions, v.Name)
		}
	}
	c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{
		{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue, Reason: "NoConflicts", Message: "no conflicts found", LastTransitionTime: metav1.Unix(1e9, 0)},
		{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted", LastTransitionTime: metav1.Unix(1e9, 0)},
	}
	return &c
}

// fillStore puts n estate CRDs through transform into an informer's store.
func fillStore(tb testing.TB, n int, transform cache.TransformFunc) cache.Indexer {
	tb.Helper()
	fixtures := realCRDJSON(tb)
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for i := range n {
		obj, err := transform(estateCRD(tb, fixtures[i%len(fixtures)], i))
		if err != nil {
			tb.Fatal(err)
		}
		if err := store.Add(obj); err != nil {
			tb.Fatal(err)
		}
	}
	return store
}

// heapPer1000 is the live heap, in MiB per 1,000 CRDs, that a store of n
// estate CRDs holds after transform.
func heapPer1000(tb testing.TB, n int, transform cache.TransformFunc) float64 {
	tb.Helper()
	realCRDJSON(tb) // the fixtures are not the cache's
	before := liveHeap()
	store := fillStore(tb, n, transform)
	after := liveHeap()
	runtime.KeepAlive(store)
	if got := len(store.ListKeys()); got != n {
		tb.Fatalf("store holds %d CRDs, want %d", got, n)
	}
	return float64(after-before) / (1 << 20) * 1000 / float64(n)
}

// liveHeap is the heap in use after two full collections (the second also
// frees what the first one's cleanups released).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// BenchmarkCRDCacheHeap reports the CRD cache's heap per 1,000 real-world
// CRDs (MiB/1000crds), with each version's schema decoded in the cache (the
// transform before schemas were packed: kube.StripForCache) and with the
// informers' transform (kube.Transform: schemas packed). Run with
// -benchtime=1x: one estate is ~200 MB of JSON.
func BenchmarkCRDCacheHeap(b *testing.B) {
	const n = 1000
	for _, tc := range []struct {
		name      string
		transform cache.TransformFunc
	}{
		{"schemas=decoded", kube.StripForCache},
		{"schemas=packed", kube.Transform(kube.NewCRDSchemas())},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var mib float64
			for b.Loop() {
				mib = heapPer1000(b, n, tc.transform)
			}
			b.ReportMetric(mib, "MiB/1000crds")
		})
	}
}
