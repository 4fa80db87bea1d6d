package csrwhy

import (
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrpolicy"
)

// Duplicates is the newest pending request of each duplicate key (the
// approver's rule, csrpolicy.DuplicateKey: the same requester, signer,
// subject and usages), built in one pass over the pending requests (O(n)):
// who asks for each request's newer twin then pays a map lookup, never a
// scan (a storm of thousands of retries with one subject would otherwise
// cost n² comparisons).
type Duplicates struct {
	newest map[string]*certificatesv1.CertificateSigningRequest
}

// NewDuplicates returns an empty grouping; Add each pending request.
func NewDuplicates(n int) *Duplicates {
	return &Duplicates{newest: make(map[string]*certificatesv1.CertificateSigningRequest, n)}
}

// Add counts one pending request (req: its spec.request decoded; nil, one
// that does not decode, has no duplicates).
func (d *Duplicates) Add(c *certificatesv1.CertificateSigningRequest, req *csr.Request) {
	k := csrpolicy.DuplicateKey(c, req)
	if k == "" {
		return
	}
	if cur, ok := d.newest[k]; !ok || csrpolicy.Newer(c, cur) {
		d.newest[k] = c
	}
}

// Newer names the newest pending request with the request's key when it is
// another one, "" when the request is its key's newest (or alone).
func (d *Duplicates) Newer(c *certificatesv1.CertificateSigningRequest, req *csr.Request) string {
	if d == nil {
		return ""
	}
	k := csrpolicy.DuplicateKey(c, req)
	if k == "" {
		return ""
	}
	if cur, ok := d.newest[k]; ok && cur.Name != c.Name && csrpolicy.Newer(cur, c) {
		return cur.Name
	}
	return ""
}
