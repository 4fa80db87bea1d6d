//go:build integration

package kube

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/clusterdesk/clusterdesk/internal/testcluster"
)

// countingCRDs counts the LIST requests to the real API server and the most
// CRDs one answer held.
type countingCRDs struct {
	listWatchClient[*apiextensionsv1.CustomResourceDefinitionList]
	lists, most int
}

func (c *countingCRDs) List(ctx context.Context, opts metav1.ListOptions) (*apiextensionsv1.CustomResourceDefinitionList, error) {
	l, err := c.listWatchClient.List(ctx, opts)
	if err == nil {
		c.lists++
		c.most = max(c.most, len(l.Items))
	}
	return l, err
}

// TestPagedCRDListOnTheDevcluster: the CRD informer's LIST, asked as the
// reflector first asks (resourceVersion 0, which the watch cache answers
// whole), reads pages and answers with every CRD, schemas packed and whole
// when unpacked.
func TestPagedCRDListOnTheDevcluster(t *testing.T) {
	ext := apiextensionsclient.NewForConfigOrDie(testcluster.RestConfig(t, testcluster.Admin)).ApiextensionsV1().CustomResourceDefinitions()
	ctx := context.Background()
	direct, err := ext.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(direct.Items) < 3*crdListPage {
		t.Fatalf("%d CRDs: was the devcluster seeded with the real-world fixtures?", len(direct.Items))
	}
	s := NewCRDSchemas()
	client := &countingCRDs{listWatchClient: ext}
	got, err := pagedCRDs{client: client, transform: Transform(s)}.List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if client.most > crdListPage || client.lists < len(direct.Items)/crdListPage {
		t.Errorf("%d requests of at most %d CRDs for %d CRDs; want pages of %d", client.lists, client.most, len(direct.Items), crdListPage)
	}
	if got.Continue != "" || got.ResourceVersion == "" {
		t.Errorf("list meta %+v: want a whole list at one resourceVersion", got.ListMeta)
	}
	served := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for i := range direct.Items {
		served[direct.Items[i].Name] = &direct.Items[i]
	}
	// Items another test created or deleted meanwhile may differ; the fixtures do not change.
	checked := 0
	for i := range got.Items {
		c := &got.Items[i]
		want, ok := served[c.Name]
		if !ok || want.ResourceVersion != c.ResourceVersion {
			continue
		}
		for _, v := range c.Spec.Versions {
			if v.Schema != nil && !IsSchemaStub(v.Schema.OpenAPIV3Schema) {
				t.Errorf("%s %s: schema not packed", c.Name, v.Name)
			}
		}
		whole, err := s.Unpack(c)
		if err != nil {
			t.Fatal(err)
		}
		whole.ManagedFields, want.ManagedFields = nil, nil // trimmed by stripForCache
		delete(whole.Annotations, LastAppliedAnnotation)
		delete(want.Annotations, LastAppliedAnnotation)
		if !equality.Semantic.DeepEqual(whole, want) {
			t.Errorf("%s: unpacked differs from the served CRD", c.Name)
		}
		checked++
	}
	if checked < len(direct.Items)*9/10 {
		t.Errorf("only %d of %d CRDs compared", checked, len(direct.Items))
	}
	t.Logf("%d CRDs in %d requests", len(got.Items), client.lists)
}

// BenchmarkCRDListPeakHeap samples the heap while the CRD informer's LIST
// runs against the devcluster (every real-world fixture CRD) and reports its
// peak above the heap before (peak-MiB), with the collector kept eager
// (GOGC 10) so that the peak is mostly live objects: the whole list as the
// reflector asks it (resourceVersion 0), transformed after, as before
// pagedCRDs, and pagedCRDs. The sampling makes it an estimate.
func BenchmarkCRDListPeakHeap(b *testing.B) {
	ext := apiextensionsclient.NewForConfigOrDie(testcluster.RestConfig(b, testcluster.Admin)).ApiextensionsV1().CustomResourceDefinitions()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		list func(s *CRDSchemas) (*apiextensionsv1.CustomResourceDefinitionList, error)
	}{
		{"list=whole", func(s *CRDSchemas) (*apiextensionsv1.CustomResourceDefinitionList, error) {
			l, err := ext.List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 500})
			if err == nil {
				for i := range l.Items {
					s.Pack(&l.Items[i])
				}
			}
			return l, err
		}},
		{"list=paged", func(s *CRDSchemas) (*apiextensionsv1.CustomResourceDefinitionList, error) {
			return pagedCRDs{client: ext, transform: Transform(s)}.List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 500})
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			defer debug.SetGCPercent(debug.SetGCPercent(10))
			var peak float64
			for b.Loop() {
				runtime.GC()
				base := heapObjects()
				stop, top := make(chan struct{}), make(chan uint64)
				go func() {
					var most uint64
					for {
						select {
						case <-stop:
							top <- most
							return
						default:
							most = max(most, heapObjects())
							time.Sleep(100 * time.Microsecond)
						}
					}
				}()
				l, err := tc.list(NewCRDSchemas())
				close(stop)
				most := <-top
				if err != nil {
					b.Fatal(err)
				}
				runtime.KeepAlive(l)
				peak = float64(most-min(most, base)) / (1 << 20)
			}
			b.ReportMetric(peak, "peak-MiB")
		})
	}
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
