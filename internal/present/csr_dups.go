package present

import (
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// CSRDuplicateIndex groups the pending CSRs by signer and subject once, so a
// detail page finds its request's duplicates in one map read. csr.Duplicates
// answers every name with a copy of its group, which in a kubelet retry storm
// (thousands of pending requests with one subject) is quadratic; the index
// keeps one sorted slice per group and copies only the group a page asks for.
type CSRDuplicateIndex struct {
	group map[string][]string // CSR name → every pending name of its group, sorted
}

// NewCSRDuplicateIndex indexes the pending CSRs of items.
func NewCSRDuplicateIndex(items []*certificatesv1.CertificateSigningRequest, env CSRChecksEnv) *CSRDuplicateIndex {
	groups := map[[2]string][]string{}
	for _, c := range items {
		if CSRState(c) != CSRPending {
			continue
		}
		if req, err := env.decode(c.Spec.Request); err == nil {
			k := [2]string{c.Spec.SignerName, req.Subject}
			groups[k] = append(groups[k], c.Name)
		}
	}
	ix := &CSRDuplicateIndex{group: map[string][]string{}}
	for _, names := range groups {
		if len(names) < 2 {
			continue
		}
		slices.Sort(names)
		for _, n := range names {
			ix.group[n] = names
		}
	}
	return ix
}

// Of returns the other pending requests of name's group (nil: none, or name is
// not pending).
func (ix *CSRDuplicateIndex) Of(name string) []string {
	g := ix.group[name]
	if len(g) == 0 {
		return nil
	}
	out := make([]string, 0, len(g)-1)
	for _, n := range g {
		if n != name {
			out = append(out, n)
		}
	}
	return out
}
