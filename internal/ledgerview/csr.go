package ledgerview

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/ledger"
)

// CSRStoryActions are the steps a CSR's story is told from; the handler asks
// the store for these only, so a request with a long tail of other writes
// still shows what it asked for, who decided and what was issued.
var CSRStoryActions = []string{ledger.ActionCreate, ledger.ActionApprove, ledger.ActionDeny, ledger.ActionIssue}

// CSRStory is what a CSR's ledger entries say about it, whether or not it
// still exists: the kube-controller-manager deletes decided requests after an
// hour, so the ledger is often the only place left to read it.
type CSRStory struct {
	// Request is spec.request decoded from the first stored object that has
	// one (normally the create step's); nil with RequestErr when none decodes.
	Request    *csr.Request
	RequestErr string
	Signer     string
	Requester  string // spec.username: who created the request
	Usages     []string
	// ExpirationSeconds is the requested validity, 0 when not asked.
	ExpirationSeconds int32
	// Decisions are the approvals and denials, attempted or made.
	Decisions    []ledger.Entry
	Certificates []Issued
}

// Issued is a certificate set in status.certificate by an issue step.
type Issued struct {
	Entry     ledger.Entry
	Serial    string // hex, colon-separated, as openssl prints it
	Subject   string
	Issuer    string
	NotBefore time.Time
	NotAfter  time.Time
	// Err says why the certificate could not be read: the status subresource
	// takes any bytes a signer writes, so nothing here is trusted to be PEM.
	Err string
}

// StoryOfCSR reads a CSR's story from its entries, oldest first.
func StoryOfCSR(entries []ledger.Entry) CSRStory {
	var s CSRStory
	for _, e := range entries {
		if s.Signer == "" {
			s.Signer = e.Signer
		}
		switch e.Action {
		case ledger.ActionApprove, ledger.ActionDeny:
			s.Decisions = append(s.Decisions, e)
		case ledger.ActionIssue:
			if e.Result == ledger.ResultOK {
				s.Certificates = append(s.Certificates, issuedBy(e))
			}
		}
		if s.Request == nil && len(e.Object) > 0 {
			s.readRequest(e.Object)
		}
	}
	if s.Request == nil && s.RequestErr == "" {
		s.RequestErr = "no stored object of this request holds spec.request (not recorded, or too large to keep)"
	}
	return s
}

// readRequest fills the request's facts from a stored object, if it holds a
// request.
func (s *CSRStory) readRequest(obj []byte) {
	var o certificatesv1.CertificateSigningRequest
	if err := json.Unmarshal(obj, &o); err != nil || len(o.Spec.Request) == 0 {
		return
	}
	s.Requester, s.Usages = o.Spec.Username, nil
	for _, u := range o.Spec.Usages {
		s.Usages = append(s.Usages, string(u))
	}
	if o.Spec.SignerName != "" {
		s.Signer = o.Spec.SignerName
	}
	if o.Spec.ExpirationSeconds != nil {
		s.ExpirationSeconds = *o.Spec.ExpirationSeconds
	}
	r, err := csr.Decode(o.Spec.Request)
	if err != nil {
		s.RequestErr = err.Error()
		return
	}
	s.Request, s.RequestErr = r, ""
}

// issuedBy reads the first certificate of the issue step's status.certificate.
func issuedBy(e ledger.Entry) Issued {
	is := Issued{Entry: e}
	if len(e.Object) == 0 {
		is.Err = "the issued object was not recorded"
		if e.ObjectDropped {
			is.Err = "the issued object was too large to keep"
		}
		return is
	}
	var o certificatesv1.CertificateSigningRequest
	if err := json.Unmarshal(e.Object, &o); err != nil {
		is.Err = "the stored object is not a CertificateSigningRequest: " + err.Error()
		return is
	}
	cert, err := firstCertificate(o.Status.Certificate)
	if err != nil {
		is.Err = err.Error()
		return is
	}
	is.Serial, is.Subject, is.Issuer = serialHex(cert.SerialNumber.Bytes()), cert.Subject.String(), cert.Issuer.String()
	is.NotBefore, is.NotAfter = cert.NotBefore.UTC(), cert.NotAfter.UTC()
	return is
}

// firstCertificate parses the first CERTIFICATE block of a PEM chain.
func firstCertificate(pemBytes []byte) (*x509.Certificate, error) {
	if len(pemBytes) == 0 {
		return nil, errors.New("status.certificate is empty")
	}
	rest := pemBytes
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, errors.New("status.certificate holds no PEM CERTIFICATE block")
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("status.certificate is not a readable certificate: %v", err)
		}
		return cert, nil
	}
}

func serialHex(b []byte) string {
	if len(b) == 0 {
		return "00"
	}
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = fmt.Sprintf("%02X", c)
	}
	return strings.Join(parts, ":")
}
