package handlers

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cleanuppages "github.com/clusterdesk/clusterdesk/handlers/cleanup"
	"github.com/clusterdesk/clusterdesk/internal/cleanup"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
)

// candidateOf is an object's metadata as a cleanup candidate, for the kind
// registry's candidates (kinds.go).
func candidateOf(o metav1.Object) cleanup.Candidate { return cleanuppages.CandidateOf(o) }

// csrCandidates adds what the CSR filters read: state and signer.
func csrCandidates(c Cluster) ([]cleanup.Candidate, error) {
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
	cand := candidateOf(it)
	cand.State, cand.Signer = csrqueue.State(it), it.Spec.SignerName
	return cand
}
