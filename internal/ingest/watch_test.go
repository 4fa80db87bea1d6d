package ingest

import (
	"context"
	"strings"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/clusterdesk/clusterdesk/internal/kube"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

var w0 = time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)

func mf(manager, op string, at time.Time, fields string) metav1.ManagedFieldsEntry {
	tm := metav1.NewTime(at)
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationType(op), Time: &tm,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func driver(name, rv string, attach bool, managed ...metav1.ManagedFieldsEntry) *storagev1.CSIDriver {
	return &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv, ManagedFields: managed},
		Spec: storagev1.CSIDriverSpec{AttachRequired: &attach}}
}

// An observed create, update and delete become entries with the diff
// between the observed versions and the field managers credited; a relist
// replaying a version is no entry. (Was internal/activity's
// TestStoreRecordsChangesWithDiffAndCredit.)
func TestWatchEntryRecordsChangesWithDiffAndCredit(t *testing.T) {
	old := driver("d", "1", true, mf("kubectl", "Update", w0, `{"f:spec":{}}`))
	cur := driver("d", "2", false, mf("kubectl", "Update", w0, `{"f:spec":{}}`), mf("ops-tool", "Apply", w0.Add(time.Second), `{"f:spec":{"f:attachRequired":{}}}`))
	var got []ledger.Entry
	for _, ch := range []kube.ObjectChange{
		{Kind: kube.CSIDrivers, New: old},
		{Kind: kube.CSIDrivers, Old: old, New: cur},
		{Kind: kube.CSIDrivers, Old: cur, New: cur}, // relist: same version, no entry
		{Kind: kube.CSIDrivers, Old: cur},
	} {
		if e, ok := WatchEntry(ch, w0); ok {
			got = append(got, e)
		}
	}
	if len(got) != 3 {
		t.Fatalf("%d entries, want 3: %+v", len(got), got)
	}
	cre, upd, del := got[0], got[1], got[2]
	if cre.Action != ledger.ActionCreate || upd.Action != ledger.ActionUpdate || del.Action != ledger.ActionDelete {
		t.Fatalf("actions %s %s %s", cre.Action, upd.Action, del.Action)
	}
	for _, e := range got {
		if e.Source != ledger.SourceWatch || e.Kind != "csidrivers" || e.Name != "d" || e.UID != "uid-d" ||
			e.ID != ledger.WatchID("uid-d", e.RV, e.Action) || e.Resource != "csidrivers" || e.APIGroup != "storage.k8s.io" || !e.Time.Equal(w0) {
			t.Fatalf("entry %+v", e)
		}
	}
	if upd.Manager != "ops-tool" || upd.RV != "2" ||
		!strings.Contains(upd.Diff, "-  attachRequired: true") || !strings.Contains(upd.Diff, "+  attachRequired: false") {
		t.Fatalf("update entry %+v", upd)
	}
	if strings.Contains(upd.Diff, "resourceVersion") || strings.Contains(upd.Diff, "managedFields") {
		t.Fatalf("bookkeeping in the diff:\n%s", upd.Diff)
	}
	if !strings.Contains(cre.Diff, "+  name: d") || !strings.Contains(del.Diff, "-  name: d") {
		t.Fatalf("create/delete diffs:\n%s\n%s", cre.Diff, del.Diff)
	}
	if cre.Manager != "kubectl" {
		t.Fatalf("create credits %q", cre.Manager)
	}
	// A status write is the status action.
	st := driver("d", "3", false, mf("kubectl", "Update", w0, `{"f:spec":{}}`), mf("ops-tool", "Apply", w0.Add(time.Second), `{"f:spec":{"f:attachRequired":{}}}`))
	st.ManagedFields = append(st.ManagedFields, mf("kubelet", "Update", w0.Add(time.Minute), `{"f:status":{}}`))
	st.ManagedFields[2].Subresource = "status"
	if e, _ := WatchEntry(kube.ObjectChange{Kind: kube.CSIDrivers, Old: cur, New: st}, w0); e.Action != ledger.ActionStatus || e.Manager != "kubelet" {
		t.Fatalf("status write %+v", e)
	}
}

// Enqueue is called on an informer's goroutine: it never blocks, a full
// queue drops the event and counts it; the queue is what the feed holds,
// whatever a storm sends. (Was TestEnqueueNeverBlocks and the ring's bound.)
func TestWatchFeedEnqueueNeverBlocks(t *testing.T) {
	f := NewWatchFeed(newMemStore(), 1, nil)
	f.Enqueue(kube.ObjectChange{Kind: kube.CSIDrivers, New: driver("a", "1", true)})
	done := make(chan struct{})
	go func() {
		for range 1000 {
			f.Enqueue(kube.ObjectChange{Kind: kube.CSIDrivers, New: driver("b", "1", true)})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Enqueue blocked on a full queue")
	}
	if f.Dropped() != 1000 || cap(f.queue) != 1 {
		t.Fatalf("dropped %d, queue %d", f.Dropped(), cap(f.queue))
	}
}

// Run appends the observed versions to the ledger in batches, and two
// replicas observing the same events store each version once.
func TestWatchFeedsOfTwoReplicasStoreEachVersionOnce(t *testing.T) {
	store := newMemStore()
	a, b := NewWatchFeed(store, 0, nil), NewWatchFeed(store, 0, nil)
	const versions = 300 // more than one batch
	for _, f := range []*WatchFeed{a, b} {
		prev := driver("d", "0", true)
		f.Enqueue(kube.ObjectChange{Kind: kube.CSIDrivers, New: prev})
		for i := range versions {
			cur := driver("d", time.Duration(i+1).String(), i%2 == 0)
			f.Enqueue(kube.ObjectChange{Kind: kube.CSIDrivers, Old: prev, New: cur})
			prev = cur
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	for _, f := range []*WatchFeed{a, b} {
		go func() { f.Run(ctx); done <- struct{}{} }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for a.Stored()+b.Stored() < 2*(versions+1) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	<-done
	if got := len(store.all()); got != versions+1 {
		t.Fatalf("%d entries stored, want %d (one per version)", got, versions+1)
	}
	if store.appends >= 2*(versions+1) {
		t.Fatalf("%d appends for %d entries: not batched", store.appends, 2*(versions+1))
	}
}
