package cleanup

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// countingAPI answers every deletion; its deletecollection fails in the
// namespaces listed in collectionFails (after succeeding in the others).
type countingAPI struct {
	deletes         atomic.Int64
	collectionFails map[string]bool
}

func (a *countingAPI) Delete(context.Context, kube.Kind, string, types.UID, bool, metav1.DeletionPropagation) (kube.WriteResult, error) {
	a.deletes.Add(1)
	return kube.WriteResult{}, nil
}

func (a *countingAPI) DeleteCollection(_ context.Context, k kube.Kind, _ string, _ bool) (kube.WriteResult, error) {
	if a.collectionFails[k.Namespace] {
		return kube.WriteResult{}, errors.New("forbidden: deletecollection")
	}
	return kube.WriteResult{}, nil
}

// TestDoneCountsEachObjectOnce: the progress count ends at the number of
// objects whichever way they went: one by one, by deletecollection, or by
// deletecollection that failed in the second namespace and fell back to one
// by one (which must not count the first namespace twice). Dry runs count
// nothing: they are not the cleanup.
func TestDoneCountsEachObjectOnce(t *testing.T) {
	items := []Candidate{{Namespace: "a", Name: "1"}, {Namespace: "a", Name: "2"}, {Namespace: "b", Name: "3"}}
	target := Target{Kind: kube.Kind{Singular: "widget"}, Namespaced: true}
	for _, tc := range []struct {
		name     string
		selector string
		fails    map[string]bool
	}{
		{"one by one", "", nil},
		{"deletecollection", "app=x", nil},
		{"deletecollection falling back", "app=x", map[string]bool{"b": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var done atomic.Int64
			s := &Service{API: &countingAPI{collectionFails: tc.fails}, Done: &done}
			s.DryRun(context.Background(), target, items)
			if n := done.Load(); n != 0 {
				t.Fatalf("dry runs counted %d", n)
			}
			out := s.Delete(context.Background(), target, items, tc.selector)
			if n := done.Load(); n != int64(len(items)) || len(out) != len(items) {
				t.Errorf("done %d with %d outcomes, want %d", n, len(out), len(items))
			}
		})
	}
}
