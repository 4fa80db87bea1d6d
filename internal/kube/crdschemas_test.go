package kube_test

import (
	"runtime"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// TestCRDSchemasDropWithTheObject: a pack lives as long as its cached object.
func TestCRDSchemasDropWithTheObject(t *testing.T) {
	s := kube.NewCRDSchemas()
	fixtures := largestCRDJSON(t)
	kept := estateCRD(t, fixtures[1], 1)
	s.Pack(kept)
	held := s.Len()
	func() {
		gone := estateCRD(t, fixtures[0], 0)
		s.Pack(gone)
	}()
	if held == 0 || s.Len() <= held {
		t.Fatalf("%d packed schemas, then %d", held, s.Len())
	}
	// Cleanups run on their own goroutine after a collection; a bounded
	// number of collections, not a time, decides.
	for i := 0; i < 100 && s.Len() > held; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if s.Len() != held {
		t.Errorf("%d packed schemas after the object was dropped, want %d", s.Len(), held)
	}
	if _, err := s.Unpack(kept); err != nil {
		t.Errorf("the live object's pack went: %v", err)
	}
	runtime.KeepAlive(kept)
}

// TestCRDSchemasShallowCopies: client-go's list extraction copies items
// shallowly; the copy unpacks.
func TestCRDSchemasShallowCopies(t *testing.T) {
	s := kube.NewCRDSchemas()
	list := &apiextensionsv1.CustomResourceDefinitionList{Items: []apiextensionsv1.CustomResourceDefinition{*estateCRD(t, largestCRDJSON(t)[0], 0)}}
	want := list.Items[0].DeepCopy()
	s.Pack(&list.Items[0])
	items, err := meta.ExtractListWithAlloc(list)
	if err != nil {
		t.Fatal(err)
	}
	list = nil
	runtime.GC()
	got, err := s.Unpack(items[0].(*apiextensionsv1.CustomResourceDefinition))
	if err != nil || !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("shallow copy: %v", err)
	}
}

// BenchmarkCRDSchemasUnpack is what a page showing schemas pays for the
// largest real-world CRD (Argo's CronWorkflow) beyond the decoded cache of
// old: inflating and decoding its schema.
func BenchmarkCRDSchemasUnpack(b *testing.B) {
	s := kube.NewCRDSchemas()
	fixture := realCRDJSON(b)[0]
	c := estateCRD(b, fixture, 0)
	s.Pack(c)
	b.ReportMetric(float64(len(fixture)), "json-bytes")
	for b.Loop() {
		if _, err := s.Unpack(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCRDSchemasPack is what the informer's transform adds per LIST or
// watch event of the largest real-world CRD.
func BenchmarkCRDSchemasPack(b *testing.B) {
	s := kube.NewCRDSchemas()
	fixture := realCRDJSON(b)[0]
	c := estateCRD(b, fixture, 0)
	for b.Loop() {
		b.StopTimer()
		cp := c.DeepCopy()
		b.StartTimer()
		s.Pack(cp)
	}
}
