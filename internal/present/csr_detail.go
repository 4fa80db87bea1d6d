package present

import (
	"net/url"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/views/model"
)

// CSRDetailPage lays out one CSR with the checks' findings beside its request.
// all is every CSR in the cache (for the duplicate-subject check); it may be nil.
func CSRDetailPage(c *certificatesv1.CertificateSigningRequest, all []*certificatesv1.CertificateSigningRequest, env CSRChecksEnv, now time.Time) model.CSRDetailPage {
	return CSRDetailPageWith(c, duplicatePending(all, env)[c.Name], env, now)
}

// CSRDetailPageWith is CSRDetailPage given the CSR's duplicates (the other
// pending requests for its signer and subject, see CSRDuplicateIndex), so a
// page view need not group every CSR in the cluster.
func CSRDetailPageWith(c *certificatesv1.CertificateSigningRequest, others []string, env CSRChecksEnv, now time.Time) model.CSRDetailPage {
	p := model.CSRDetailPage{DetailPage: CSRDetail(c, now)}
	dups := map[string][]string{c.Name: others}
	req, err := env.decode(c.Spec.Request)
	if err != nil {
		req = nil
		p.ChecksNote = "The request does not decode, so only the checks of the spec ran."
	}
	p.Findings = findingModels(checkCSR(c, req, dups, env))
	if err == nil && CSRState(c) != CSRPending && len(p.Findings) > 0 {
		p.ChecksNote = "This request is already decided; the findings explain what was decided on."
	}
	if len(c.Status.Certificate) > 0 {
		p.CertificateHref = CSRCertificateHref(c.Name)
	}
	return p
}

// CSRCertificateHref is where the issued certificate of CSR name downloads.
func CSRCertificateHref(name string) string {
	return "/csrs/" + url.PathEscape(name) + "/certificate"
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
