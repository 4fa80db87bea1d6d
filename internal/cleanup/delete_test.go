package cleanup

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// recordingAPI answers every deletion and remembers the UID precondition each
// object was deleted with, and the most deletions in flight at once.
type recordingAPI struct {
	mu       sync.Mutex
	uids     map[string]types.UID
	inFlight atomic.Int64
	most     atomic.Int64
}

func (a *recordingAPI) Delete(_ context.Context, k kube.Kind, name string, uid types.UID, dry bool, _ metav1.DeletionPropagation) (kube.WriteResult, error) {
	n := a.inFlight.Add(1)
	defer a.inFlight.Add(-1)
	for m := a.most.Load(); n > m && !a.most.CompareAndSwap(m, n); m = a.most.Load() {
	}
	if !dry {
		a.mu.Lock()
		a.uids[k.Namespace+"/"+name] = uid
		a.mu.Unlock()
	}
	return kube.WriteResult{}, nil
}

// TestDeleteCarriesEachObjectsUID: every object is deleted by its own request
// whose precondition is the UID the preview listed (the API server then
// refuses an object replaced under the same name), at most Workers at once,
// and the progress count ends at the number of objects. Dry runs count
// nothing: they are not the cleanup.
func TestDeleteCarriesEachObjectsUID(t *testing.T) {
	var items []Candidate
	for i := range 50 {
		ns := "a"
		if i%2 == 1 {
			ns = "b"
		}
		items = append(items, Candidate{Namespace: ns, Name: string(rune('A' + i)), UID: "uid-" + string(rune('A'+i))})
	}
	target := Target{Kind: kube.Kind{Singular: "widget"}, Namespaced: true}
	api := &recordingAPI{uids: map[string]types.UID{}}
	var done atomic.Int64
	s := &Service{API: api, Done: &done}
	s.DryRun(context.Background(), target, items)
	if n := done.Load(); n != 0 {
		t.Fatalf("dry runs counted %d", n)
	}
	out := s.Delete(context.Background(), target, items)
	if n := done.Load(); n != int64(len(items)) || len(out) != len(items) {
		t.Errorf("done %d with %d outcomes, want %d", n, len(out), len(items))
	}
	for i, c := range items {
		if got := api.uids[c.Namespace+"/"+c.Name]; got != types.UID(c.UID) {
			t.Errorf("%s/%s deleted with UID precondition %q, want %q", c.Namespace, c.Name, got, c.UID)
		}
		if out[i].Item.Name != c.Name || out[i].Result != Deleted {
			t.Errorf("outcome %d: %+v, want %s deleted", i, out[i], c.Name)
		}
	}
	if m := api.most.Load(); m > Workers {
		t.Errorf("%d deletions in flight at once, want at most %d", m, Workers)
	}
}
