package kube_test

import (
	"encoding/json"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/kube"
)

// TestTransformSharesCSRLists: two requests of one requester (the shapes'
// i and i+300) come out of the informers' transform with one slice of
// groups, one of usages and one FieldsV1 per field set between them; a
// request of another requester keeps groups of its own; every object's
// managedFields take exactly their length. (TestTransformKeepsCSRValues holds
// the values unchanged.)
func TestTransformSharesCSRLists(t *testing.T) {
	shapes := newCSRShapes(t)
	transform := kube.Transform(&kube.CRDSchemas{})
	cached := func(i int) *certificatesv1.CertificateSigningRequest {
		var c certificatesv1.CertificateSigningRequest
		if err := json.Unmarshal(shapeCSRJSON(t, shapes, i, true), &c); err != nil {
			t.Fatal(err)
		}
		got, err := transform(&c)
		if err != nil {
			t.Fatal(err)
		}
		return got.(*certificatesv1.CertificateSigningRequest)
	}
	a, b, other := cached(2), cached(302), cached(3)
	if &a.Spec.Groups[0] != &b.Spec.Groups[0] || cap(a.Spec.Groups) != len(a.Spec.Groups) {
		t.Errorf("one requester's groups %v and %v are two slices (or room to append: cap %d)", a.Spec.Groups, b.Spec.Groups, cap(a.Spec.Groups))
	}
	if &a.Spec.Groups[0] == &other.Spec.Groups[0] {
		t.Errorf("groups %v and %v share a slice", a.Spec.Groups, other.Spec.Groups)
	}
	if &a.Spec.Usages[0] != &other.Spec.Usages[0] {
		t.Errorf("equal usages %v are two slices", a.Spec.Usages)
	}
	if len(a.ManagedFields) != len(b.ManagedFields) || len(a.ManagedFields) < 2 {
		t.Fatalf("managedFields: %d and %d entries", len(a.ManagedFields), len(b.ManagedFields))
	}
	for i := range a.ManagedFields {
		if a.ManagedFields[i].FieldsV1 != b.ManagedFields[i].FieldsV1 {
			t.Errorf("entry %d (%s): equal field sets in two FieldsV1", i, a.ManagedFields[i].Manager)
		}
	}
	for _, c := range []*certificatesv1.CertificateSigningRequest{a, b, other} {
		if cap(c.ManagedFields) != len(c.ManagedFields) {
			t.Errorf("%s: %d managedFields entries in room for %d", c.Name, len(c.ManagedFields), cap(c.ManagedFields))
		}
	}
}
