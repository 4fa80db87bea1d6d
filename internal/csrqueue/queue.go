package csrqueue

import (
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// DecodesKept is how many decoded requests a Queue remembers: above the
// 50,000 CSRs the page benchmark holds (a full memo starts again empty, so a
// cluster just over the size would decode every view).
const DecodesKept = 200_000

// Queue is one server's CSR queue caches, built by its constructor and owned
// by what serves the queue (two servers in one process share nothing):
// decoded requests (spec.request is immutable and decoding is a pure
// function of it, so every page of the server may share them, and a queue of
// thousands of CSRs spares one signature verification per row per view), the
// per-object facts of every view, and the storm index for pages of one CSR.
type Queue struct {
	src     Source
	decodes *csr.Memo
	facts   *Cache
	storms  *stormIndex
}

// New returns the caches of the queue over src's CSRs; when src reports
// changes (kube.Cache), the storm index follows them.
func New(src Source) *Queue {
	return &Queue{src: src, decodes: csr.NewMemo(DecodesKept), facts: &Cache{}, storms: newStormIndex(src)}
}

// Decode decodes spec.request through the memo.
func (q *Queue) Decode(b []byte) (*csr.Request, error) { return q.decodes.Decode(b) }

// ForgetDecodes empties the memo (benchmarks of a cold queue).
func (q *Queue) ForgetDecodes() { q.decodes = csr.NewMemo(DecodesKept) }

// Checks is what the checks get from outside a CSR. clusterdesk does not
// watch Nodes (one more informer over the largest objects of a big cluster),
// so the kubelet-serving check says the Node is unknown.
func (q *Queue) Checks() Checks { return Checks{Decode: q.decodes.Decode} }

// Facts is the per-object cache every view of the queue shares.
func (q *Queue) Facts() *Cache { return q.facts }

// Storms returns the storm index of the source's CSRs, rebuilt only after a
// CSR change; nil when the CSRs cannot be listed.
func (q *Queue) Storms() *Storms {
	return q.storms.get(q.src, func(items []*certificatesv1.CertificateSigningRequest) *Storms {
		return q.facts.Storms(items, q.Checks())
	})
}
