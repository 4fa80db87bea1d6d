package csrqueue

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// Checks is what the checks need from outside one CSR.
type Checks struct {
	// Decode decodes spec.request; nil means csr.Decode. Queue.Checks passes
	// its csr.Memo's Decode so that a page over thousands of CSRs stays fast.
	Decode func([]byte) (*csr.Request, error)
	// Transient decodes the requests the queue does not keep decoded (the
	// decided ones: rows shown, text searched once); nil means Decode.
	// Queue.Checks passes a small memo's, so that the request of a row shown
	// on every view is not decoded on every view, and tens of thousands of
	// decided requests are not kept decoded in the large one.
	Transient func([]byte) (*csr.Request, error)
	// NodeAddresses looks up a Node's addresses; nil: Nodes are not known.
	NodeAddresses func(name string) ([]string, bool)
	// MaxDuration overrides signers' maximum certificate lifetimes.
	MaxDuration map[string]time.Duration
}

// DecodeRequest decodes spec.request with e.Decode, else csr.Decode.
func (e Checks) DecodeRequest(b []byte) (*csr.Request, error) {
	if e.Decode != nil {
		return e.Decode(b)
	}
	return csr.Decode(b)
}

func (e Checks) decodeTransient(b []byte) (*csr.Request, error) {
	if e.Transient != nil {
		return e.Transient(b)
	}
	return e.DecodeRequest(b)
}

// Check runs the signer-aware checks on one CSR, with how many other pending
// requests share its signer and subject. Decided CSRs are checked too: the
// findings explain, after the fact, what was approved.
func Check(c *certificatesv1.CertificateSigningRequest, req *csr.Request, duplicates int, env Checks) []csr.Finding {
	return csr.Check(csr.SpecOf(c), req, csr.Env{
		NodeAddresses: env.NodeAddresses,
		MaxDuration:   env.MaxDuration,
		Duplicates:    duplicates,
	})
}
