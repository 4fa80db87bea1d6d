package writeaudit

import (
	"context"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/internal/csr"
	"github.com/clusterdesk/clusterdesk/internal/decide"
	"github.com/clusterdesk/clusterdesk/internal/issue"
)

// The CSR pages (handlers/csrs) run the decision and upload use cases; their
// records go to the one audit trail (trail.go) through Request.

// Decided records one CSR decision with who made it.
func (a Request) Decided(_ context.Context, d decide.Decision) {
	a.t.record(a.ctx, csrRecord(d))
}

// Issued records one certificate upload with who made it.
func (a Request) Issued(_ context.Context, o issue.Outcome) {
	rec := csrWrite("issue", o.Ref.Name, o.Err)
	if o.Before != nil {
		rec.From, rec.Before = csr.Typed(o.Before), o.Before.ResourceVersion
	}
	if o.After != nil {
		rec.To, rec.After = csr.Typed(o.After), o.After.ResourceVersion
	}
	a.t.record(a.ctx, rec)
}

// csrRecord is the audit record of one decision, with the CSR as DecideCSR
// read it and as the API server stored it.
func csrRecord(d decide.Decision) write {
	verb := d.Verb()
	rec := csrWrite(strings.ToLower(verb[:len(verb)-1]), d.Ref.Name, d.Err)
	rec.Reason = d.Text
	if d.Before != nil {
		rec.From, rec.Before = csr.Typed(d.Before), d.Before.ResourceVersion
	}
	if d.After != nil {
		rec.To, rec.After = csr.Typed(d.After), d.After.ResourceVersion
	}
	return rec
}

// csrWrite is the record of verb on the CSR name, named by its group and
// resource as well as its kind (trail.go).
func csrWrite(verb, name string, err error) write {
	return write{Verb: verb, Kind: "CertificateSigningRequest", Group: certificatesv1.GroupName,
		Resource: "certificatesigningrequests", Name: name, Err: err}
}
