package activity

import (
	"fmt"
	"net/url"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// bigObject is a CRD-sized object: n properties in a schema, about 100 bytes each.
func bigObject(name, rv string, n int, marker string) *unstructured.Unstructured {
	props := map[string]any{}
	for i := range n {
		props[fmt.Sprintf("field%05d", i)] = map[string]any{"type": "string", "description": "A field of the schema, described at some length."}
	}
	props["marker"] = map[string]any{"type": "string", "description": marker}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": name, "resourceVersion": rv},
		"spec":     map[string]any{"versions": []any{map[string]any{"name": "v1", "schema": map[string]any{"openAPIV3Schema": map[string]any{"properties": props}}}}},
	}}
}

// BenchmarkStoreAddUpdate measures recording one observed update of a large
// object (about 200 kB of YAML): rendering both versions and diffing them.
func BenchmarkStoreAddUpdate(b *testing.B) {
	s := NewStore(Options{})
	old, cur := bigObject("big.example.com", "1", 2000, "before"), bigObject("big.example.com", "2", 2000, "after")
	b.ReportAllocs()
	for b.Loop() {
		s.Add(Change{Kind: "crds", Old: old, New: cur})
	}
}

// BenchmarkFilterFullRing measures the activity page's filtering of a full
// ring (5,000 entries) by kind, who and time.
func BenchmarkFilterFullRing(b *testing.B) {
	s := NewStore(Options{})
	t0 := time.Now()
	for i := range DefaultCapacity {
		s.push(Entry{Time: t0.Add(time.Duration(i) * time.Second), Kind: []string{"crds", "csrs", "flowschemas"}[i%3],
			Name: fmt.Sprintf("obj-%d", i), Source: SourceWatch, Op: OpUpdated, Manager: fmt.Sprintf("manager-%d", i%20)})
	}
	q, _ := ParseQuery(url.Values{"kind": {"crds"}, "who": {"manager-1"}, "since": {"1h"}}, t0.Add(2*time.Hour))
	b.ReportAllocs()
	for b.Loop() {
		Filter(s.Entries(), q, func(string) bool { return true })
	}
}

// TestFullRingMemory reports what a full ring of small updates holds (a
// measurement printed with -v, bounded by the test).
func TestFullRingMemory(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := NewStore(Options{})
	for i := range DefaultCapacity {
		s.Add(Change{Kind: "csidrivers", Old: driver(fmt.Sprintf("d%d", i), "1", true), New: driver(fmt.Sprintf("d%d", i), "2", false)})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("a full ring of %d small updates holds about %d KiB", DefaultCapacity, held/1024)
	if len(s.Entries()) != DefaultCapacity {
		t.Fatalf("%d entries", len(s.Entries()))
	}
	if held > 64<<20 {
		t.Fatalf("a full ring of small updates holds %d MiB", held>>20)
	}
}
