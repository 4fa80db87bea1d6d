package kube

import (
	"unique"
	"unsafe"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Interning: a LIST or a WATCH decodes every string and byte slice of every
// object into its own allocation, so 50,000 CSRs hold 50,000 copies of
// "kubernetes.io/kube-apiserver-client", of each manager's name, and of the
// same few managedFields sets. internForCache, run by the informers'
// transform on an object nobody else holds yet, points such values at one
// canonical copy (Go's unique package: a canonical value lives as long as
// some object refers to it). The cache never modifies the objects it hands
// out (client-go's rule; every writer works on a DeepCopy or a live GET), so
// sharing is safe. What is interned is what repeats across objects; a value
// that is each object's own (a name, a UID, a request PEM) is left alone: it
// would only cost the unique map's entry.

func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

func internAll(ss []string) {
	for i := range ss {
		ss[i] = intern(ss[i])
	}
}

// internBytes is b's canonical copy, as a slice over an interned string's
// bytes: read-only, as every byte of a cached object is.
func internBytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	s := intern(string(b))
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// internManagedFields interns what repeats in managedFields: managers,
// operations, API versions, subresources and the (trimmed) field sets, which
// objects written by the same manager share (one FieldsV1 per set:
// lists_shared.go).
func internManagedFields(mf []metav1.ManagedFieldsEntry) {
	for i := range mf {
		e := &mf[i]
		e.Manager, e.APIVersion, e.FieldsType, e.Subresource = intern(e.Manager), intern(e.APIVersion), intern(e.FieldsType), intern(e.Subresource)
		e.Operation = metav1.ManagedFieldsOperationType(intern(string(e.Operation)))
		if e.FieldsV1 != nil {
			e.FieldsV1.Raw = internBytes(e.FieldsV1.Raw)
			e.FieldsV1 = shareFields(e.FieldsV1)
		}
	}
}

// exactManagedFields is mf in a slice of exactly its length: the decoder
// appends entry by entry, so three entries (a CSR's create, approval and
// status) sit in room for four, 96 bytes each.
func exactManagedFields(mf []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	if cap(mf) == len(mf) {
		return mf
	}
	return append(make([]metav1.ManagedFieldsEntry, 0, len(mf)), mf...)
}

// internCSR interns what repeats across CSRs: signer, requester, groups
// and usages (the lists too: lists_shared.go), extra, and the conditions'
// words (approval reasons and messages repeat per approver).
func internCSR(c *certificatesv1.CertificateSigningRequest) {
	s := &c.Spec
	s.SignerName, s.Username, s.UID = intern(s.SignerName), intern(s.Username), intern(s.UID)
	s.Groups = sharedGroups.share(s.Groups)
	s.Usages = sharedUsages.share(s.Usages)
	for _, v := range s.Extra {
		internAll(v)
	}
	for i := range c.Status.Conditions {
		cond := &c.Status.Conditions[i]
		cond.Type = certificatesv1.RequestConditionType(intern(string(cond.Type)))
		cond.Status = corev1.ConditionStatus(intern(string(cond.Status)))
		cond.Reason, cond.Message = intern(cond.Reason), intern(cond.Message)
	}
}
