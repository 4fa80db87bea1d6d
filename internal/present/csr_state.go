package present

import (
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// CSR states as the queue's tabs and filters name them; csrqueue owns them
// (these names serve the presenters; other packages use csrqueue's).
const (
	CSRPending  = csrqueue.Pending
	CSRApproved = csrqueue.Approved // approved, not (yet) issued
	CSRIssued   = csrqueue.Issued
	CSRDenied   = csrqueue.Denied
	CSRFailed   = csrqueue.Failed
)

// CSRState returns the state key of a CSR (csrqueue.State).
func CSRState(c *certificatesv1.CertificateSigningRequest) string { return csrqueue.State(c) }

// csrStateTab is one state tab of the queue.
type csrStateTab struct {
	key, label string
	tone       model.Tone
}

// csrStates are the tabs of the queue, in order, after "All" (csrqueue.States).
var csrStates = []csrStateTab{
	{CSRPending, "Pending", model.TonePending},
	{CSRApproved, "Approved, not issued", model.TonePending},
	{CSRIssued, "Issued", model.ToneOK},
	{CSRDenied, "Denied", model.ToneError},
	{CSRFailed, "Failed", model.ToneError},
}

// findingModels words the checks' findings for the views.
func findingModels(fs []csr.Finding) []model.CSRFinding {
	out := make([]model.CSRFinding, 0, len(fs))
	for _, f := range fs {
		m := model.CSRFinding{Check: f.Check, Message: f.Message}
		switch f.Severity {
		case csr.Danger:
			m.Tone, m.Label = model.ToneError, "Danger"
		case csr.Warning:
			m.Tone, m.Label = model.ToneWarning, "Warning"
		default:
			m.Tone, m.Label = model.ToneNeutral, "Note"
		}
		out = append(out, m)
	}
	return out
}
