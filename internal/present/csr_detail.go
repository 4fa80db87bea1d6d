package present

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csrqueue"
	"github.com/clusterdesk/clusterdesk/internal/urls"
	"github.com/clusterdesk/clusterdesk/views/model"
)

// CSRDetailPage lays out one CSR with the checks' findings beside its request.
// storms is the index of the pending CSRs (for the duplicates finding: a
// lookup, not a scan of every CSR); nil leaves that finding out.
func CSRDetailPage(c *certificatesv1.CertificateSigningRequest, storms *csrqueue.Storms, env csrqueue.Checks, now time.Time) model.CSRDetailPage {
	p := model.CSRDetailPage{DetailPage: CSRDetail(c, now)}
	dups, dupID := 0, ""
	// The index is by name; it counts for this object only if it was built
	// from this object (same UID), not from one since replaced.
	if CSRState(c) == CSRPending && storms.UID(c.Name) == string(c.UID) {
		dups, dupID = storms.Duplicates(c.Name)
	}
	req, err := env.DecodeRequest(c.Spec.Request)
	if err != nil {
		req = nil
		p.ChecksNote = "The request does not decode, so only the checks of the spec ran."
	}
	p.Findings = findingModels(csrqueue.Check(c, req, dups, env))
	linkDuplicates(p.Findings, dupID)
	if err == nil && CSRState(c) != CSRPending && len(p.Findings) > 0 {
		p.ChecksNote = "This request is already decided; the findings explain what was decided on."
	}
	if len(c.Status.Certificate) > 0 {
		p.CertificateHref = urls.CSRCertificate(c.Name)
	}
	return p
}

// CSRCertificateFile names the downloaded PEM file after the CSR, keeping only
// characters safe in a Content-Disposition filename (CSR names are DNS
// subdomains, so nothing is lost in practice).
func CSRCertificateFile(name string) string {
	b := make([]byte, 0, len(name)+4)
	for i := 0; i < len(name); i++ {
		switch ch := name[i]; {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9', ch == '-', ch == '.', ch == '_':
			b = append(b, ch)
		default:
			b = append(b, '_')
		}
	}
	if len(b) == 0 {
		b = append(b, "certificate"...)
	}
	return string(b) + ".crt"
}
