package csrqueue

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// CSR states as the queue's tabs and filters name them.
const (
	Pending  = "pending"
	Approved = "approved" // approved, not (yet) issued
	Issued   = "issued"
	Denied   = "denied"
	Failed   = "failed"
)

// States are the state keys in the order of the queue's tabs (after "All").
var States = []string{Pending, Approved, Issued, Denied, Failed}

// State returns the state key of a CSR. Denied wins over everything, Failed
// over Approved; Approved without a certificate is not Issued.
func State(c *certificatesv1.CertificateSigningRequest) string {
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
		return Denied
	case failed:
		return Failed
	case approved && len(c.Status.Certificate) > 0:
		return Issued
	case approved:
		return Approved
	default:
		return Pending
	}
}

// DecidedAt returns when the CSR was approved or denied (the condition's
// update time, else its transition time), or the zero time for a pending one.
func DecidedAt(c *certificatesv1.CertificateSigningRequest) time.Time {
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
