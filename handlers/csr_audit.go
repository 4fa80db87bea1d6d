package handlers

import (
	"context"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/clusterdesk/clusterdesk/handlers/csrs"
	"github.com/clusterdesk/clusterdesk/internal/decide"
	"github.com/clusterdesk/clusterdesk/internal/issue"
)

// The CSR pages (handlers/csrs) run the decision and upload use cases; their
// records go to the one audit trail (edit_audit.go) through requestAudit.

// Decided records one CSR decision with who made it.
func (a requestAudit) Decided(_ context.Context, d decide.Decision) {
	a.h.trail.record(a.c, csrRecord(d))
}

// Issued records one certificate upload with who made it.
func (a requestAudit) Issued(_ context.Context, o issue.Outcome) {
	rec := csrWrite("issue", o.Ref.Name, o.Err)
	if o.Before != nil {
		rec.From, rec.Before = csrs.TypedCSR(o.Before), o.Before.ResourceVersion
	}
	if o.After != nil {
		rec.To, rec.After = csrs.TypedCSR(o.After), o.After.ResourceVersion
	}
	a.h.trail.record(a.c, rec)
}

// csrRecord is the audit record of one decision, with the CSR as DecideCSR
// read it and as the API server stored it.
func csrRecord(d decide.Decision) writeRecord {
	verb := d.Verb()
	rec := csrWrite(strings.ToLower(verb[:len(verb)-1]), d.Ref.Name, d.Err)
	rec.Reason = d.Text
	if d.Before != nil {
		rec.From, rec.Before = csrs.TypedCSR(d.Before), d.Before.ResourceVersion
	}
	if d.After != nil {
		rec.To, rec.After = csrs.TypedCSR(d.After), d.After.ResourceVersion
	}
	return rec
}

// csrWrite is the record of verb on the CSR name, named by its group and
// resource as well as its kind (edit_audit.go).
func csrWrite(verb, name string, err error) writeRecord {
	return writeRecord{Verb: verb, Kind: "CertificateSigningRequest", Group: certificatesv1.GroupName,
		Resource: "certificatesigningrequests", Name: name, Err: err}
}
