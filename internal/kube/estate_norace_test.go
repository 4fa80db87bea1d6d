//go:build !race

package kube_test

// The tests over every real-world CRD that run on one goroutine: built
// without -race (scripts/go-test-unit.sh runs them in its pass without the
// race detector, which finds nothing here and made them several times
// slower: 76 s together).

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// TestCRDSchemasRoundTripEveryRealCRD packs and unpacks every real-world
// CRD: what the pages get back is what the API server served.
func TestCRDSchemasRoundTripEveryRealCRD(t *testing.T) {
	s := kube.NewCRDSchemas()
	for i, fixture := range realCRDJSON(t) {
		want := estateCRD(t, fixture, i)
		cached := want.DeepCopy()
		out, err := kube.Transform(s)(cached)
		if err != nil || out != any(cached) {
			t.Fatalf("%s: Transform = %v, %v", want.Name, out, err)
		}
		for _, v := range cached.Spec.Versions {
			if v.Schema != nil && !kube.IsSchemaStub(v.Schema.OpenAPIV3Schema) {
				t.Errorf("%s %s: schema kept decoded", want.Name, v.Name)
			}
		}
		if raw, _ := json.Marshal(cached); len(raw) > 64<<10 {
			t.Errorf("%s: the cached object is still %d bytes of JSON", want.Name, len(raw))
		}
		got, err := s.Unpack(cached)
		if err != nil {
			t.Fatalf("%s: %v", want.Name, err)
		}
		if !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("%s: unpacked CRD differs from the served one", want.Name)
		}
		if got == cached {
			t.Errorf("%s: Unpack returned the cached object, not a copy", want.Name)
		}
	}
}

// crdHeapBudget is the CRD cache's heap budget per 1,000 CRDs (issue 15), less
// a margin for the Go runtime's and the fixtures' variation.
const crdHeapBudget = 40

// TestCRDCacheHeap holds the CRD cache to its memory budget: every real-world
// CRD once (the mix of an estate, the largest included), through the
// informers' transform.
func TestCRDCacheHeap(t *testing.T) {
	n := len(realCRDJSON(t))
	if n < 140 {
		t.Fatalf("only %d CRD fixtures", n)
	}
	got := heapPer1000(t, n, kube.Transform(kube.NewCRDSchemas()))
	t.Logf("%.1f MiB per 1,000 CRDs", got)
	if got > crdHeapBudget {
		t.Errorf("the CRD cache holds %.1f MiB per 1,000 real-world CRDs, over the %d MiB budget", got, crdHeapBudget)
	}
}
