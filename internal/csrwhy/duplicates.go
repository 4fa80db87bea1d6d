package csrwhy

import (
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// DupKey is what makes two requests the same request asked again: the same
// requester (spec.username), signer, subject and usages. A kubelet that
// retries asks with a new key each time; only the newest can still matter.
type DupKey struct {
	Requester, Signer, Subject, Usages string
}

// KeyOf is the request's DupKey; ok is false for a request whose
// spec.request does not decode (it has no subject to compare).
func KeyOf(c *certificatesv1.CertificateSigningRequest, req *csr.Request) (DupKey, bool) {
	if req == nil {
		return DupKey{}, false
	}
	usages := make([]string, len(c.Spec.Usages))
	for i, u := range c.Spec.Usages {
		usages[i] = string(u)
	}
	slices.Sort(usages)
	return DupKey{Requester: c.Spec.Username, Signer: c.Spec.SignerName, Subject: req.Subject, Usages: strings.Join(usages, ",")}, true
}

// Duplicates is the newest pending request of each DupKey, built in one pass
// over the pending requests (O(n)): who asks for each request's newer twin
// then pays a map lookup, never a scan (a storm of thousands of retries
// with one subject would otherwise cost n² comparisons).
type Duplicates struct {
	newest map[DupKey]newest
}

type newest struct {
	name    string
	created time.Time
}

// NewDuplicates returns an empty grouping; Add each pending request.
func NewDuplicates(n int) *Duplicates { return &Duplicates{newest: make(map[DupKey]newest, n)} }

// Add counts one pending request.
func (d *Duplicates) Add(c *certificatesv1.CertificateSigningRequest, req *csr.Request) {
	k, ok := KeyOf(c, req)
	if !ok {
		return
	}
	if cur, ok := d.newest[k]; !ok || newer(c.Name, c.CreationTimestamp.Time, cur) {
		d.newest[k] = newest{c.Name, c.CreationTimestamp.Time}
	}
}

// Newer names the newest pending request with the request's key when it is
// another one, "" when the request is its key's newest (or alone).
func (d *Duplicates) Newer(c *certificatesv1.CertificateSigningRequest, req *csr.Request) string {
	if d == nil {
		return ""
	}
	k, ok := KeyOf(c, req)
	if !ok {
		return ""
	}
	if cur, ok := d.newest[k]; ok && cur.name != c.Name && newer(cur.name, cur.created, newest{c.Name, c.CreationTimestamp.Time}) {
		return cur.name
	}
	return ""
}

// newer orders requests by creation, the name breaking ties (as the queue's
// storms do).
func newer(name string, created time.Time, than newest) bool {
	if !created.Equal(than.created) {
		return created.After(than.created)
	}
	return name > than.name
}
