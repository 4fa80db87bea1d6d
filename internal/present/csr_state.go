package present

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// CSR states as the queue's tabs and filters name them.
const (
	CSRPending  = "pending"
	CSRApproved = "approved" // approved, not (yet) issued
	CSRIssued   = "issued"
	CSRDenied   = "denied"
	CSRFailed   = "failed"
)

// csrStateTab is one state tab of the queue.
type csrStateTab struct {
	key, label string
	tone       model.Tone
}

// csrStates are the tabs of the queue, in order, after "All".
var csrStates = []csrStateTab{
	{CSRPending, "Pending", model.TonePending},
	{CSRApproved, "Approved, not issued", model.TonePending},
	{CSRIssued, "Issued", model.ToneOK},
	{CSRDenied, "Denied", model.ToneError},
	{CSRFailed, "Failed", model.ToneError},
}

// CSRState returns the state key of a CSR. Denied wins over everything, Failed
// over Approved; Approved without a certificate is not Issued.
func CSRState(c *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, cond := range c.Status.Conditions {
		if cond.Status != "True" && cond.Status != "" {
			continue
		}
		switch cond.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	switch {
	case denied:
		return CSRDenied
	case failed:
		return CSRFailed
	case approved && len(c.Status.Certificate) > 0:
		return CSRIssued
	case approved:
		return CSRApproved
	default:
		return CSRPending
	}
}

// decidedAt returns when the CSR was approved or denied (the condition's
// update time, else its transition time), or the zero time for a pending one.
func decidedAt(c *certificatesv1.CertificateSigningRequest) time.Time {
	for _, cond := range c.Status.Conditions {
		if cond.Type != certificatesv1.CertificateApproved && cond.Type != certificatesv1.CertificateDenied {
			continue
		}
		if !cond.LastUpdateTime.IsZero() {
			return cond.LastUpdateTime.Time
		}
		return cond.LastTransitionTime.Time
	}
	return time.Time{}
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

// CSRChecksEnv is what the checks need from outside one CSR.
type CSRChecksEnv struct {
	// Decode decodes spec.request; nil means csr.Decode. The handlers pass a
	// csr.Memo's Decode so that a page over thousands of CSRs stays fast.
	Decode func([]byte) (*csr.Request, error)
	// NodeAddresses looks up a Node's addresses; nil: Nodes are not known.
	NodeAddresses func(name string) ([]string, bool)
	// MaxDuration overrides signers' maximum certificate lifetimes.
	MaxDuration map[string]time.Duration
}

func (e CSRChecksEnv) decode(b []byte) (*csr.Request, error) {
	if e.Decode != nil {
		return e.Decode(b)
	}
	return csr.Decode(b)
}

// checkCSR runs the signer-aware checks on one CSR, with how many other
// pending requests share its signer and subject. Decided CSRs are checked
// too: the findings explain, after the fact, what was approved.
func checkCSR(c *certificatesv1.CertificateSigningRequest, req *csr.Request, duplicates int, env CSRChecksEnv) []csr.Finding {
	return csr.Check(csr.SpecOf(c), req, csr.Env{
		NodeAddresses: env.NodeAddresses,
		MaxDuration:   env.MaxDuration,
		Duplicates:    duplicates,
	})
}
