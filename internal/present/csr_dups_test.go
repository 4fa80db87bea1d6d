package present

import (
	"fmt"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// TestCSRDuplicateIndexAgreesWithDuplicates: the index answers what the
// per-view grouping answered, for pending, decided and unique requests.
func TestCSRDuplicateIndexAgreesWithDuplicates(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	var items []*certificatesv1.CertificateSigningRequest
	for i := range 5 {
		items = append(items, qcsr(t, fmt.Sprintf("storm-%d", i), apiClient, "bob", "bob", now.Add(-time.Hour), CSRPending, time.Time{}))
	}
	items = append(items,
		qcsr(t, "decided", apiClient, "bob", "bob", now.Add(-time.Hour), CSRIssued, now),
		qcsr(t, "alone", apiClient, "ann", "ann", now.Add(-time.Hour), CSRPending, time.Time{}))
	want := duplicatePending(items, CSRChecksEnv{})
	ix := NewCSRDuplicateIndex(items, CSRChecksEnv{})
	for _, c := range items {
		if got := ix.Of(c.Name); !slices.Equal(got, want[c.Name]) {
			t.Errorf("%s: index says %v, grouping says %v", c.Name, got, want[c.Name])
		}
	}
	if len(ix.Of("storm-0")) != 4 {
		t.Errorf("storm-0 has 4 duplicates, got %v", ix.Of("storm-0"))
	}
}
