package csrqueue

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
)

// Words is how the queue's rows word what the text filter searches. The
// filter matches what a row shows, and only that (a person must be able to
// see why a row matched); the presenter lays out the rows, so it lends its
// wording here and the queue searches it. Every method must be a pure
// function of its arguments: the queue caches what Static and Findings return
// per object.
type Words interface {
	// Status is the text of the state's badge (also what the state column sorts by).
	Status(state string) string
	// Static is the row's text that depends on the object alone (name,
	// subject or decoding error, signer, requester, duration, status),
	// lower-cased.
	Static(c *certificatesv1.CertificateSigningRequest, state string, req *csr.Request, decodeErr error) string
	// Findings is the findings as the row shows them, lower-cased.
	Findings(fs []csr.Finding) string
	// Moment is the text of the row's age and state cells that depends on the
	// time (the age; how long an approved request has waited), as shown.
	Moment(c *certificatesv1.CertificateSigningRequest, state string, decided, now time.Time) (age, wait string)
}
