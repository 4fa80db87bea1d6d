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
	// Static is the row's text that depends on the object alone, besides
	// its name, lower-cased, in lines that each end in a newline: own, the
	// object's own lines (the subject or decoding error), and shared, the
	// lines many objects have in common (signer, requester, duration,
	// status), which the queue keeps once for all of them. The filter
	// searches the name's line (the queue's: the name lower-cased, which
	// for a name the API server validated is the name itself, not a copy),
	// then own, then shared (staticText).
	Static(c *certificatesv1.CertificateSigningRequest, state string, req *csr.Request, decodeErr error) (own, shared string)
	// Findings is the findings as the row shows them, lower-cased.
	Findings(fs []csr.Finding) string
	// Moment is the text of the row's age and state cells that depends on the
	// time (the age; how long an approved request has waited), as shown.
	Moment(c *certificatesv1.CertificateSigningRequest, state string, decided, now time.Time) (age, wait string)
}
