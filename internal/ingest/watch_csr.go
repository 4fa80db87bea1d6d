package ingest

import (
	"bytes"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// sameRequest returns cur as the diff from old should see it: the cache
// keeps a decided request's spec.request as clusterdesk's summary
// (internal/kube/csr_request.go), so the version that records the decision
// holds the summary where the pending version held the PEM, and the diff
// showed spec.request changing (its size and SHA-256) on every decision.
// The API server never changes a CSR's spec after its creation (each update
// strategy's PrepareForUpdate copies the old spec: csrStrategy,
// csrStatusStrategy, csrApprovalStrategy in
// k8s.io/kubernetes/pkg/registry/certificates/certificates/strategy.go),
// so the difference is the cache's: cur is given old's request when its
// request is the summary of old's, and is left as it is otherwise (a
// change the API server did make would still show). cur belongs to the
// cache: the result is a copy.
func sameRequest(old, cur runtime.Object) runtime.Object {
	o, ok1 := old.(*certificatesv1.CertificateSigningRequest)
	n, ok2 := cur.(*certificatesv1.CertificateSigningRequest)
	if !ok1 || !ok2 || !csr.IsSummary(n.Spec.Request) || csr.IsSummary(o.Spec.Request) {
		return cur
	}
	if s, ok := csr.Summarize(o.Spec.Request); !ok || !bytes.Equal(s, n.Spec.Request) {
		return cur
	}
	c := *n // shallow: ObjectText only reads it
	c.Spec.Request = o.Spec.Request
	return &c
}
