package kinds

import (
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/handlers/ports"
	"github.com/clusterdesk/clusterdesk/internal/cleanup"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
)

// csrCandidates adds what the CSR filters read: state and signer.
func csrCandidates(c ports.Cluster) ([]cleanup.Candidate, error) {
	items, err := c.CSRs()
	if err != nil {
		return nil, err
	}
	out := make([]cleanup.Candidate, len(items))
	for i, it := range items {
		out[i] = csrCandidate(it)
	}
	return out, nil
}

func csrCandidate(it *certificatesv1.CertificateSigningRequest) cleanup.Candidate {
	cand := cleanup.CandidateOf(it)
	cand.State, cand.Signer = csrqueue.State(it), it.Spec.SignerName
	return cand
}
