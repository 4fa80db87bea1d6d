package kube

import (
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// Status shows a kind's count on every page (the side bar); counting lists
// every key of the store, so it must happen only after the informer's
// handler saw an event, not once per call.
func TestKindCountListsKeysOnlyAfterAnEvent(t *testing.T) {
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &certificatesv1.CertificateSigningRequest{}, 0, cache.Indexers{})
	ks := &kindState{informer: inf}
	add := func(name string) {
		if err := inf.GetStore().Add(&certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	add("a")
	add("b")
	if n := ks.count(); n != 2 {
		t.Fatalf("count %d, want 2", n)
	}
	if allocs := testing.AllocsPerRun(100, func() { ks.count() }); allocs != 0 {
		t.Errorf("counting again without an event allocates %v times a call (a list of every key)", allocs)
	}
	add("c")
	ks.changes.Add(1) // what notify does for the event
	if n := ks.count(); n != 3 {
		t.Errorf("count %d after an event, want 3", n)
	}
	if err := inf.GetStore().Delete(&certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	ks.changes.Add(1)
	if n := ks.count(); n != 2 {
		t.Errorf("count %d after a delete, want 2", n)
	}
}
